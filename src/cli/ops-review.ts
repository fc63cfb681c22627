// `warden ops upgrades|features|tenants ...`: the operator review scripts of sql/ops/, run against
// DATABASE_URL or the embedded database, exactly as psql runs them in production.
import { userInfo } from "node:os";
import { parseArgs } from "node:util";
import { DbError, type Db } from "../db/index.ts";
import { fromDbError } from "../http/errors.ts";
import { bindVariables, translatePsqlScript } from "./psql-script.ts";

export class ReviewUsageError extends Error {}

export const REVIEW_USAGE = `  ops upgrades list                       pending upgrade requests, oldest first
  ops upgrades approve ID [--reviewer NAME]
  ops upgrades reject ID --note TEXT [--reviewer NAME]
  ops features grant TENANT FEATURE [--reviewer NAME]
  ops features revoke TENANT FEATURE
  ops tenants show TENANT`;

interface Command {
  file: string;
  vars: Record<string, string>;
}

function reviewer(value: string | undefined): string {
  return value || process.env.USER || userInfo().username;
}

/** Which script a command line names, with its variables; undefined when it is not one of ours. */
export function parseReviewCommand(args: string[]): Command | undefined {
  const [group, action, ...rest] = args;
  const key = `${group} ${action}`;
  const known = ["upgrades list", "upgrades approve", "upgrades reject", "features grant", "features revoke", "tenants show"];
  if (!known.includes(key)) return undefined;
  const { values, positionals } = parseArgs({ args: rest, options: { reviewer: { type: "string" }, note: { type: "string" } }, strict: true, allowPositionals: true });
  const want = (n: number) => {
    if (positionals.length !== n) throw new ReviewUsageError(`ops ${key} takes ${n} argument${n === 1 ? "" : "s"}`);
  };
  switch (key) {
    case "upgrades list":
      want(0);
      return { file: "ops/upgrades_list", vars: {} };
    case "upgrades approve":
      want(1);
      return { file: "ops/upgrades_approve", vars: { request_id: positionals[0], reviewer: reviewer(values.reviewer) } };
    case "upgrades reject":
      want(1);
      if (!values.note) throw new ReviewUsageError("ops upgrades reject needs --note TEXT");
      return { file: "ops/upgrades_reject", vars: { request_id: positionals[0], reviewer: reviewer(values.reviewer), note: values.note } };
    case "features grant":
      want(2);
      return { file: "ops/features_grant", vars: { tenant_id: positionals[0], feature: positionals[1], reviewer: reviewer(values.reviewer) } };
    case "features revoke":
      want(2);
      return { file: "ops/features_revoke", vars: { tenant_id: positionals[0], feature: positionals[1] } };
    default:
      want(1);
      return { file: "ops/tenants_show", vars: { tenant_id: positionals[0] } };
  }
}

/** Runs one sql/ops/ script with psql-style variables; refusals surface as DbError. */
export async function runOpsScript<T = Record<string, unknown>>(db: Db, file: string, vars: Record<string, string>): Promise<T[]> {
  const statement = translatePsqlScript(db.sqlFile(file));
  return db.runScriptStatement<T>(file, statement.text, bindVariables(statement, vars));
}

/** Runs the script; prints `{ok, rows}` or `{ok:false, error, message}`. Exit 0, or 1 when refused. */
export async function runReviewCommand(db: Db, command: Command): Promise<number> {
  try {
    const rows = await runOpsScript(db, command.file, command.vars);
    if (command.file === "ops/tenants_show" && rows.length === 0) {
      console.log(JSON.stringify({ ok: false, error: "not_found", message: `no tenant ${command.vars.tenant_id}` }));
      return 1;
    }
    console.log(JSON.stringify({ ok: true, rows: [...rows] }, null, 2));
    return 0;
  } catch (err) {
    if (!(err instanceof DbError)) throw err;
    // The procedures refuse illegal transitions; say which, in the API's words where there is one.
    const mapped = fromDbError(err);
    console.log(JSON.stringify({ ok: false, error: mapped?.code ?? "refused", message: err.message }));
    return 1;
  }
}
