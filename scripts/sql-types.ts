// Writes src/db/queries.gen.ts: every query of sql/queries/ by name, with its parameter tuple and
// row type as PostgreSQL describes them once the schema is applied, so that a misspelled query
// name or a wrong parameter count fails the typecheck (src/db/index.ts types query() by them).
//
//   bun scripts/sql-types.ts           regenerate (npm run sql:types)
//   bun scripts/sql-types.ts --check   fail when the checked-in file differs (npm run typecheck)
//
// Row fields are non-null except (1) a field that comes straight from a table column without
// NOT NULL (the statement's row description names the column; pg_attribute.attnotnull says) and
// (2) the fields a query file lists on a `-- nullable: a, b` line: what PostgreSQL cannot tell
// (function results, expressions over NULL, columns on the outer side of a join). Parameters are
// written without null; src/db/index.ts lets each be null, since PostgreSQL does not say which
// may be NULL.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadSqlFiles, SQL_DIR, wrapDriver } from "../src/db/index.ts";
import { migrate } from "../src/db/migrate.ts";
import { createPglite } from "../src/db/pglite-open.ts";
import { pgliteDriver } from "../src/db/pglite.ts";

const OUT = new URL("../src/db/queries.gen.ts", import.meta.url);
const COMMAND = "npm run sql:types";

type PGlite = Awaited<ReturnType<typeof createPglite>>;
interface Field {
  name: string;
  tableID: number;
  columnID: number;
  dataTypeID: number;
}
interface Described {
  params: number[];
  /** Undefined for a statement that returns no rows (NoData). */
  fields?: Field[];
}
interface PgType {
  name: string;
  category: string;
  elem: number;
}

// PGlite's describeQuery() leaves out each result column's table and column, so the three
// messages it sends (Parse, Describe of the statement, Sync) are built here.
const utf8 = new TextEncoder();
function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
/** A frontend message: its type byte, its length (itself included) and its body. */
function message(type: string, ...body: Uint8Array[]): Uint8Array {
  const head = new Uint8Array(5);
  head[0] = type.charCodeAt(0);
  new DataView(head.buffer).setInt32(1, 4 + body.reduce((n, p) => n + p.length, 0));
  return concat(head, ...body);
}
const cstring = (s: string) => utf8.encode(`${s}\0`);

async function describe(pg: PGlite, name: string, sql: string): Promise<Described> {
  const noParamTypes = new Uint8Array(2);
  const { messages } = await pg.execProtocol(
    concat(message("P", cstring(""), cstring(sql), noParamTypes), message("D", cstring("S")), message("S")),
    { throwOnError: false },
  );
  const described: Described = { params: [] };
  for (const m of messages as unknown as { name: string; message?: string; dataTypeIDs?: number[]; fields?: Field[] }[]) {
    if (m.name === "error") throw new Error(`sql/queries/${name}.sql: ${m.message}`);
    if (m.name === "parameterDescription") described.params = m.dataTypeIDs!;
    if (m.name === "rowDescription") described.fields = m.fields!;
  }
  return described;
}

/** The TypeScript type of a value both drivers return (src/db/postgres.ts, src/db/pglite-open.ts). */
function rowType(types: Map<number, PgType>, oid: number): string {
  const t = types.get(oid);
  if (t?.category === "A") return `${rowType(types, t.elem)}[]`;
  switch (t?.name) {
    case "bool":
      return "boolean";
    // int8 too: both drivers are told to parse it as a number.
    case "int2":
    case "int4":
    case "int8":
    case "oid":
    case "float4":
    case "float8":
      return "number";
    case "json":
    case "jsonb":
      return "unknown";
    case "date":
    case "timestamp":
    case "timestamptz":
      return "Date";
    case "bytea":
      return "Uint8Array";
    // numeric, text, enums, domains, uuid and the rest: the text PostgreSQL sends.
    default:
      return "string";
  }
}

/** What a caller may pass for a parameter of this type; both drivers serialise these. */
function paramType(types: Map<number, PgType>, oid: number): string {
  const t = types.get(oid);
  if (t?.category === "A") {
    const elem = paramType(types, t.elem);
    return `readonly ${elem.includes("|") ? `(${elem})` : elem}[]`;
  }
  switch (t?.name) {
    case "bool":
      return "boolean";
    case "int2":
    case "int4":
    case "int8":
    case "oid":
    case "float4":
    case "float8":
    case "numeric":
      return "number | string";
    case "json":
    case "jsonb":
    case "unknown":
      return "unknown";
    case "date":
    case "timestamp":
    case "timestamptz":
      return "Date | string";
    case "bytea":
      return "Uint8Array";
    default:
      return "string";
  }
}

/** The fields named on the file's `-- nullable: a, b` lines. */
function declaredNullable(sql: string): Set<string> {
  const names = new Set<string>();
  for (const m of sql.matchAll(/^\s*--\s*nullable:(.*)$/gm)) for (const n of m[1].split(/[\s,]+/)) if (n) names.add(n);
  return names;
}

const key = (name: string) => (/^[A-Za-z_$][\w$]*$/.test(name) ? name : JSON.stringify(name));

export async function generate(): Promise<string> {
  const queries = [...loadSqlFiles(join(SQL_DIR, "queries"))].filter(([name]) => !name.startsWith("test/"));
  const pg = await createPglite(undefined);
  try {
    await migrate(wrapDriver(pgliteDriver(pg)));
    const types = new Map<number, PgType>();
    for (const t of (await pg.query<{ oid: number; typname: string; typcategory: string; typelem: number }>("SELECT oid, typname, typcategory, typelem FROM pg_type")).rows) {
      types.set(t.oid, { name: t.typname, category: t.typcategory, elem: t.typelem });
    }
    const described = new Map<string, Described>();
    for (const [name, sql] of queries) described.set(name, await describe(pg, name, sql));
    const columns = [...described.values()].flatMap((d) => d.fields ?? []).filter((f) => f.tableID !== 0);
    const notNull = new Set(
      (await pg.query<{ col: string }>("SELECT attrelid || '.' || attnum AS col FROM pg_attribute WHERE attnotnull AND attrelid = ANY ($1::oid[])", [[...new Set(columns.map((f) => f.tableID))]])).rows.map((r) => r.col),
    );

    const out: string[] = [
      `// Generated from sql/queries/**/*.sql by \`${COMMAND}\` (scripts/sql-types.ts): do not edit.`,
      "// Each query's parameters and row, as PostgreSQL describes the statement once the schema is applied.",
      "// Row fields are non-null except a field straight from a table column without NOT NULL and the",
      "// fields a query lists on a `-- nullable: a, b` line (function results, expressions over NULL,",
      "// outer-joined columns: what PostgreSQL cannot tell). Each parameter may also be null (src/db/index.ts).",
      "",
      "export interface Queries {",
    ];
    for (const [name, sql] of queries) {
      const d = described.get(name)!;
      const nullable = declaredNullable(sql);
      const params = d.params.map((oid) => paramType(types, oid));
      out.push(`  ${JSON.stringify(name)}: {`, `    params: [${params.join(", ")}];`);
      if (!d.fields?.length) {
        out.push("    row: Record<string, never>;");
      } else {
        out.push("    row: {");
        const seen = new Set<string>();
        for (const f of d.fields) {
          if (seen.has(f.name)) throw new Error(`sql/queries/${name}.sql: two result columns named ${f.name}; rows are objects, give each its own name`);
          seen.add(f.name);
          const t = rowType(types, f.dataTypeID);
          const orNull = nullable.has(f.name) || (f.tableID !== 0 && !notNull.has(`${f.tableID}.${f.columnID}`));
          out.push(`      ${key(f.name)}: ${t === "unknown" || !orNull ? t : `${t} | null`};`);
        }
        out.push("    };");
        for (const n of nullable) if (!seen.has(n)) throw new Error(`sql/queries/${name}.sql: "-- nullable:" names ${n}, which the query does not return`);
      }
      out.push("  };");
    }
    out.push("}", "", "export type QueryName = keyof Queries;", "");
    return out.join("\n");
  } finally {
    await pg.close();
  }
}

if (import.meta.main) {
  const text = await generate().catch((err: Error) => {
    console.error(`sql-types: ${err.message}`);
    process.exit(1);
  });
  const path = OUT.pathname;
  if (process.argv.includes("--check")) {
    let current = "";
    try {
      current = readFileSync(path, "utf8");
    } catch {}
    if (current !== text) {
      console.error(`src/db/queries.gen.ts does not match sql/queries/: run \`${COMMAND}\` and commit the result.`);
      process.exit(1);
    }
  } else {
    writeFileSync(path, text);
    console.log(`wrote src/db/queries.gen.ts`);
  }
}
