import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { bindVariables, translatePsqlScript } from "../../src/ops/psql-script.ts";
import { SQL_DIR } from "../../src/db/index.ts";

describe("translatePsqlScript", () => {
  test("turns quoted psql variables into bind parameters, reusing a repeated name", () => {
    const s = translatePsqlScript("\\set ON_ERROR_STOP on\n-- note\nSELECT f(:'a', :'b', :'a');\n");
    expect(s).toEqual({ text: "SELECT f($1, $2, $1)", names: ["a", "b"] });
    expect(bindVariables(s, { a: "x", b: "y" })).toEqual(["x", "y"]);
  });

  test("a value is bound, never pasted into the text", () => {
    const s = translatePsqlScript("SELECT f(:'note');");
    const params = bindVariables(s, { note: "'); DROP TABLE tenants; --" });
    expect(s.text).toBe("SELECT f($1)");
    expect(params).toEqual(["'); DROP TABLE tenants; --"]);
  });

  test("a missing variable, an unquoted variable or two statements are refused", () => {
    expect(() => bindVariables(translatePsqlScript("SELECT f(:'a');"), {})).toThrow("-v a=");
    expect(() => translatePsqlScript("SELECT f(:a);")).toThrow();
    expect(() => translatePsqlScript("SELECT 1; SELECT 2;")).toThrow();
    expect(translatePsqlScript("SELECT x::text FROM t WHERE y = ':b';").names).toEqual([]);
  });

  test("every operator script translates", () => {
    const dir = join(SQL_DIR, "ops");
    const files = readdirSync(dir).filter((f) => f.endsWith(".sql"));
    expect(files.length).toBeGreaterThanOrEqual(6);
    for (const file of files) {
      const text = readFileSync(join(dir, file), "utf8");
      expect(text).toContain("\\set ON_ERROR_STOP on");
      expect(translatePsqlScript(text).text).toMatch(/^SELECT /);
    }
  });
});
