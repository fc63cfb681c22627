// The functions of the baseline schema (sql/schema/*.sql) as their text declares them: a reader's
// view of the files, for the tests that keep the files readable (every function declares its
// volatility; a function is defined before the functions that call it).
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

export const SCHEMA_DIR = join(import.meta.dir, "..", "..", "sql", "schema");

export type SchemaFunction = {
  /** The file's name, e.g. 08_receipts.sql. */
  file: string;
  /** Its index in the files' name order (the order the migration runs them). */
  fileIndex: number;
  /** Offset of CREATE FUNCTION in its file. */
  offset: number;
  name: string;
  /** Everything of the statement but its body, comments removed. */
  attributes: string;
  body: string;
  /** The volatility the text declares, or null when it leaves it to the default. */
  volatility: "VOLATILE" | "STABLE" | "IMMUTABLE" | null;
};

/** The schema's files in the order the migration runs them. */
export function schemaFiles(): string[] {
  return readdirSync(SCHEMA_DIR).filter((f) => f.endsWith(".sql")).sort();
}

const CREATE = /CREATE\s+(?:OR\s+REPLACE\s+)?FUNCTION\s+([A-Za-z_][A-Za-z0-9_.]*)\s*\(/gi;

function stripComments(sql: string): string {
  return sql.replace(/--[^\n]*/g, " ").replace(/\/\*[\s\S]*?\*\//g, " ");
}

/** Every CREATE FUNCTION of sql/schema/*.sql, in the order the migration meets them. */
export function schemaFunctions(): SchemaFunction[] {
  const out: SchemaFunction[] = [];
  schemaFiles().forEach((file, fileIndex) => {
    const text = readFileSync(join(SCHEMA_DIR, file), "utf8");
    for (const m of text.matchAll(CREATE)) {
      // Only statements: a CREATE FUNCTION at a line's start (not one named in a comment).
      const lineStart = text.lastIndexOf("\n", m.index) + 1;
      if (text.slice(lineStart, m.index).trim() !== "") continue;
      const rest = text.slice(m.index);
      const as = /\bAS\s+(\$[A-Za-z_]*\$)/i.exec(rest);
      if (!as) throw new Error(`${file}: CREATE FUNCTION ${m[1]} has no dollar-quoted body`);
      const bodyStart = as.index + as[0].length;
      const bodyEnd = rest.indexOf(as[1], bodyStart);
      if (bodyEnd < 0) throw new Error(`${file}: the body of ${m[1]} does not end`);
      const afterBody = bodyEnd + as[1].length;
      const semicolon = rest.indexOf(";", afterBody);
      const attributes = stripComments(rest.slice(0, as.index) + " " + rest.slice(afterBody, semicolon < 0 ? undefined : semicolon));
      const declared = attributes.match(/\b(VOLATILE|STABLE|IMMUTABLE)\b/gi) ?? [];
      out.push({
        file, fileIndex, offset: m.index, name: m[1].toLowerCase(), attributes,
        body: rest.slice(bodyStart, bodyEnd),
        volatility: declared.length === 1 ? (declared[0].toUpperCase() as SchemaFunction["volatility"]) : null,
      });
    }
  });
  return out;
}
