// The baseline schema reads as what it does: every function of sql/schema/*.sql says in its text
// whether it writes or reads the clock per call (VOLATILE), reads tables without writing (STABLE)
// or depends on its arguments only (IMMUTABLE), rather than leaving it to PostgreSQL's default
// (VOLATILE), and the migrated database records what the text says. And a reader meets each
// function before the functions that call it: in an earlier file, or earlier in the same file.
import { expect, test } from "bun:test";
import { testQuery } from "../helpers/sql.ts";
import { testService } from "../helpers/service.ts";
import { schemaFunctions } from "../helpers/schema-functions.ts";

test("every CREATE FUNCTION of sql/schema/*.sql declares its volatility", () => {
  const functions = schemaFunctions();
  expect(functions.length).toBeGreaterThan(100);
  const undeclared = functions.filter((f) => f.volatility === null).map((f) => `${f.file}: ${f.name}()`);
  expect(undeclared).toEqual([]);
});

test("the migrated database records the volatility each function's text declares", async () => {
  const { db } = await testService();
  const rows = await testQuery<{ name: string; volatility: string }>(db, "schema_function_volatility");
  const recorded = new Map(rows.map((r) => [r.name, { v: "VOLATILE", s: "STABLE", i: "IMMUTABLE" }[r.volatility]]));
  const differs = schemaFunctions()
    .filter((f) => recorded.get(f.name) !== f.volatility)
    .map((f) => `${f.file}: ${f.name}() says ${f.volatility}, the database has ${recorded.get(f.name)}`);
  expect(differs).toEqual([]);
});

test("a function of sql/schema/*.sql calls only functions defined before it", () => {
  const functions = schemaFunctions();
  const first = new Map<string, (typeof functions)[number]>();
  for (const f of functions) if (!first.has(f.name)) first.set(f.name, f);
  const late = new Set<string>();
  for (const f of functions) {
    // Strings and comments name functions without calling them.
    const code = f.body.replace(/--[^\n]*/g, " ").replace(/'(?:[^']|'')*'/g, "''");
    for (const m of code.matchAll(/\b([A-Za-z_][A-Za-z0-9_]*)\s*\(/g)) {
      const callee = first.get(m[1].toLowerCase());
      if (!callee || callee.name === f.name) continue;
      if (callee.fileIndex > f.fileIndex || (callee.fileIndex === f.fileIndex && callee.offset > f.offset)) {
        late.add(`${f.file}: ${f.name}() -> ${callee.file}: ${callee.name}()`);
      }
    }
  }
  expect([...late].sort()).toEqual([]);
});
