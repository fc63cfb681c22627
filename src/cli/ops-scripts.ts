// `warden ops upgrades|features|tenants|sessions|mail ...` and `warden ops sql FILE`: the scripts of
// sql/ops/, run exactly as psql runs them in production, against whichever target ops-target.ts
// found (the running service, the embedded database, or DATABASE_URL).
import { userInfo } from "node:os";
import { basename } from "node:path";
import { parseArgs } from "node:util";
import { DbError } from "../db/index.ts";
import { fromDbError } from "../http/errors.ts";
import type { OpsTarget } from "../ops/client.ts";

export class OpsUsageError extends Error {}

/** One named script command: its positional arguments and options become the script's variables. */
export interface ScriptCommand {
  usage: string;
  summary: string;
  file: string;
  /** Variable names of the positional arguments, in order. */
  args: string[];
  /** --name options: a fallback, or required when it has none. */
  options?: Record<string, { variable: string; fallback?: () => string }>;
  /** A script that answers no row found nothing (exit 1, not_found). */
  notFound?: string;
}

function reviewer(): string {
  return process.env.USER || userInfo().username;
}

const REVIEWER = { reviewer: { variable: "reviewer", fallback: reviewer } };

export const SCRIPT_COMMANDS: Record<string, ScriptCommand> = {
  "upgrades list": { usage: "ops upgrades list", summary: "pending upgrade requests, oldest first", file: "ops/upgrades_list", args: [] },
  "upgrades approve": { usage: "ops upgrades approve ID [--reviewer NAME]", summary: "approve a request: the plan changes for the very next request", file: "ops/upgrades_approve", args: ["request_id"], options: REVIEWER },
  "upgrades reject": {
    usage: "ops upgrades reject ID --note TEXT [--reviewer NAME]",
    summary: "reject a request with a note the customer reads",
    file: "ops/upgrades_reject",
    args: ["request_id"],
    options: { ...REVIEWER, note: { variable: "note" } },
  },
  "features grant": { usage: "ops features grant TENANT FEATURE [--reviewer NAME]", summary: "grant a request-only feature", file: "ops/features_grant", args: ["tenant_id", "feature"], options: REVIEWER },
  "features revoke": { usage: "ops features revoke TENANT FEATURE [--reviewer NAME]", summary: "withdraw a granted feature", file: "ops/features_revoke", args: ["tenant_id", "feature"], options: REVIEWER },
  "tenants show": { usage: "ops tenants show TENANT", summary: "one tenant: plan, keys, features, upgrades", file: "ops/tenants_show", args: ["tenant_id"], notFound: "tenant_id" },
  "sessions end": { usage: "ops sessions end TENANT [--reviewer NAME]", summary: "sign a customer out everywhere (API keys keep working)", file: "ops/sessions_end", args: ["tenant_id"], options: REVIEWER },
  "mail list": {
    usage: "ops mail list [--status pending|sent|failed|all]",
    summary: "the mail outbox, newest first (at most 100)",
    file: "ops/mail_list",
    args: [],
    options: { status: { variable: "status", fallback: () => "all" } },
  },
  "mail retry": { usage: "ops mail retry ID", summary: "send a waiting message now", file: "ops/mail_retry", args: ["id"] },
};

/** The file and variables a script command line names. */
export function parseScriptCommand(key: string, command: ScriptCommand, args: string[]): { file: string; vars: Record<string, string> } {
  const options = Object.fromEntries(Object.keys(command.options ?? {}).map((name) => [name, { type: "string" as const }]));
  const { values, positionals } = parseArgs({ args, options, strict: true, allowPositionals: true });
  const n = command.args.length;
  if (positionals.length !== n) throw new OpsUsageError(`ops ${key} takes ${n} argument${n === 1 ? "" : "s"}: ${command.usage}`);
  const vars: Record<string, string> = Object.fromEntries(command.args.map((name, i) => [name, positionals[i]]));
  for (const [name, option] of Object.entries(command.options ?? {})) {
    const value = (values as Record<string, string | undefined>)[name] || option.fallback?.();
    if (value === undefined) throw new OpsUsageError(`ops ${key} needs --${name}: ${command.usage}`);
    vars[option.variable] = value;
  }
  return { file: command.file, vars };
}

export const SQL_USAGE = "ops sql FILE [-v name=value]...";

/** `ops sql FILE -v a=b ...`: any script of sql/ops/, named by its path or its name. */
export function parseSqlCommand(args: string[]): { file: string; vars: Record<string, string> } {
  const { values, positionals } = parseArgs({ args, options: { v: { type: "string", short: "v", multiple: true } }, strict: true, allowPositionals: true });
  if (positionals.length !== 1) throw new OpsUsageError(`ops sql needs one FILE: ${SQL_USAGE}`);
  const path = positionals[0];
  const name = basename(path).replace(/\.sql$/, "");
  const dir = path.slice(0, path.length - basename(path).length).replace(/\/+$/, "");
  if (dir !== "" && !/(^|\/)sql\/ops$/.test(dir) && dir !== "ops") throw new OpsUsageError(`ops sql runs the scripts of sql/ops/ only, not ${path}`);
  const vars: Record<string, string> = {};
  for (const pair of values.v ?? []) {
    const eq = pair.indexOf("=");
    if (eq < 1) throw new OpsUsageError(`-v takes name=value, not ${pair}`);
    vars[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  return { file: `ops/${name}`, vars };
}

/** Runs the script; prints `{ok, rows}` or `{ok:false, error, message}`. Exit 0, or 1 when refused. */
export async function runScript(target: OpsTarget, file: string, vars: Record<string, string>, notFound?: string): Promise<number> {
  try {
    const rows = (await target.request({ op: "script", file, vars })) as unknown[];
    if (notFound && rows.length === 0) {
      console.log(JSON.stringify({ ok: false, error: "not_found", message: `nothing found for ${vars[notFound]}` }));
      return 1;
    }
    console.log(JSON.stringify({ ok: true, rows }, null, 2));
    return 0;
  } catch (err) {
    if (!(err instanceof DbError)) throw err;
    // The procedures refuse illegal transitions; say which, in the API's words where there is one.
    const mapped = fromDbError(err);
    console.log(JSON.stringify({ ok: false, error: mapped?.code ?? "refused", message: err.message }));
    return 1;
  }
}
