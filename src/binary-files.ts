// What the single binary carries besides code, read while Bun bundles it: src/binary.ts imports
// these functions `with { type: "macro" }`, so they run at build time and their results are
// inlined into the binary as literals.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { loadSqlFiles, SQL_DIR } from "./db/index.ts";

/** Every file of sql/ (the schema, queries, operator scripts), by path without `.sql`. */
export function sqlFiles(): Record<string, string> {
  return Object.fromEntries(loadSqlFiles(SQL_DIR));
}

/**
 * The console build in WARDEN_CONSOLE_DIR (npm run build makes a fresh one there), base64 by file
 * name; empty without one, and the binary then answers /console with 404.
 */
export function consoleFiles(): Record<string, string> {
  const dir = process.env.WARDEN_CONSOLE_DIR;
  if (!dir) return {};
  const names = readdirSync(dir).filter((name) => !name.startsWith("."));
  return Object.fromEntries(names.map((name) => [name, readFileSync(join(dir, name)).toString("base64")]));
}
