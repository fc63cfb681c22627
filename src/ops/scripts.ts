// Running an operator script of sql/ops/ (written for psql) against either database.
import type { Db } from "../db/index.ts";
import { bindVariables, ScriptUsageError, translatePsqlScript } from "./psql-script.ts";

/** Runs one sql/ops/ script with psql-style variables, in a transaction of its own; refusals surface as DbError. */
export async function runOpsScript<T = Record<string, unknown>>(db: Db, file: string, vars: Record<string, string>): Promise<T[]> {
  let text: string;
  try {
    text = db.sqlFile(file);
  } catch {
    throw new ScriptUsageError(`there is no operator script ${file}.sql in this build`);
  }
  const statement = translatePsqlScript(text);
  return db.runScriptStatement<T>(file, statement.text, bindVariables(statement, vars), true);
}
