// `warden ops ...`: operator commands against DATABASE_URL, or the embedded database in DATA_DIR
// (through the running service's channel while it runs, src/ops/channel.ts). A command is one
// entry of OPS_COMMANDS: its usage line and what it runs on the target.
import { parseArgs } from "node:util";
import { loadConfig, type Config } from "../config.ts";
import type { OpsTarget } from "../ops/client.ts";
import { targetQueryable } from "../ops/client.ts";
import { DbError } from "../db/index.ts";
import { serviceSecret } from "../accounts/sessions.ts";
import type { Queryable } from "../db/index.ts";
import { activeKey, opens, ReceiptSigner, signingKeyBox } from "../receipts/signer.ts";
import { refuseOnPostgres, runBackup } from "./backup.ts";
import { withOpsTarget } from "./ops-target.ts";
import { OpsUsageError, parseScriptCommand, parseSqlCommand, runScript, SCRIPT_COMMANDS, SQL_USAGE } from "./ops-scripts.ts";
import { runReceiptsCheck } from "./ops-receipts.ts";
import { commandHelp, type UsageLine } from "./usage.ts";
import { callerPath } from "./inputs.ts";

export { OpsUsageError } from "./ops-scripts.ts";

interface OpsCommand {
  usage: string;
  summary: string;
  run(args: string[], config: Config): Promise<number>;
}

/** A signing key's id: its RFC 7638 thumbprint, base64url. */
const KID = /^[A-Za-z0-9_-]{43}$/;

/** `KID --compromised-since TIME`, in any order. A kid begins with "-" one time in 64: it is never an option. */
export function revokeArgs(args: string[]): { kid: string; since: string } {
  const kids = args.filter((arg) => KID.test(arg));
  const rest = args.filter((arg) => !KID.test(arg) && arg !== "--");
  const { values, positionals } = parseArgs({ args: [...rest, "--", ...kids], options: { "compromised-since": { type: "string" } }, strict: true, allowPositionals: true });
  const since = values["compromised-since"];
  if (positionals.length !== 1 || !since) throw new OpsUsageError("ops signing-key revoke needs one KID and --compromised-since TIME");
  if (Number.isNaN(Date.parse(since))) throw new OpsUsageError("--compromised-since needs an ISO 8601 time, such as 2026-01-01T00:00:00Z");
  return { kid: positionals[0]!, since };
}

const OTHER_SECRET = "The JWT_SECRET here does not open the active signing key, so the service could not use a key made here; run this with the service's JWT_SECRET.";

/** The box of this command's service secret; undefined when it does not open the active key (the service runs under another JWT_SECRET). */
async function signingKeys(db: Queryable, config: Config) {
  const box = await signingKeyBox(await serviceSecret(db, config.jwtSecret), config.jwtSecretPrevious);
  const active = (await db.query("receipts/signing_keys")).find((row) => row.status === "active");
  return !active || (await opens(box, active)) ? box : undefined;
}

function noArgs(key: string, args: string[]): void {
  if (args.length) throw new OpsUsageError(`ops ${key} takes no arguments`);
}

function oneArg(key: string, args: string[], usage: string): string {
  const { positionals } = parseArgs({ args, options: {}, strict: true, allowPositionals: true });
  if (positionals.length !== 1) throw new OpsUsageError(`ops ${key} needs one argument: ${usage}`);
  return positionals[0];
}

const OPS_COMMANDS: Record<string, OpsCommand> = {
  ...Object.fromEntries(
    Object.entries(SCRIPT_COMMANDS).map(([key, command]) => [
      key,
      {
        usage: command.usage,
        summary: command.summary,
        run: (args: string[], config: Config) => {
          const { file, vars } = parseScriptCommand(key, command, args);
          return withOpsTarget(config, (target) => runScript(target, file, vars, command.notFound));
        },
      },
    ]),
  ),
  sql: {
    usage: SQL_USAGE,
    summary: "run any script of sql/ops/ with psql-style variables",
    run: (args, config) => {
      const { file, vars } = parseSqlCommand(args);
      return withOpsTarget(config, (target) => runScript(target, file, vars));
    },
  },
  "receipts check": {
    usage: "ops receipts check TENANT",
    summary: "re-walk a tenant's receipt chain; exit 1 on any break",
    run: (args, config) => {
      const tenant = oneArg("receipts check", args, "ops receipts check TENANT");
      return withOpsTarget(config, (target) => runReceiptsCheck(target, tenant));
    },
  },
  "signing-key rotate": {
    usage: "ops signing-key rotate",
    summary: "retire the receipt signing key and make a new one",
    run: (args, config) => {
      noArgs("signing-key rotate", args);
      return withOpsTarget(config, async (target: OpsTarget) => {
        const db = targetQueryable(target);
        const box = await signingKeys(db, config);
        if (!box) {
          console.log(JSON.stringify({ ok: false, error: "refused", message: OTHER_SECRET }));
          return 1;
        }
        const kid = await ReceiptSigner.rotate(db, box);
        console.log(JSON.stringify({ ok: true, kid, note: "old keys stay in the JWKS; running instances switch within a minute" }));
        return 0;
      });
    },
  },
  "signing-key revoke": {
    usage: "ops signing-key revoke KID --compromised-since TIME",
    summary: "mark a signing key compromised since TIME (ISO 8601); its later signatures stop verifying",
    run: (args, config) => {
      const { kid, since } = revokeArgs(args);
      return withOpsTarget(config, async (target: OpsTarget) => {
        const db = targetQueryable(target);
        // Asked before the revoke, which never waits on it: a compromised key is marked whatever the secret here.
        const box = await signingKeys(db, config);
        let rows: unknown[];
        try {
          rows = (await target.request({ op: "script", file: "ops/signing_key_revoke", vars: { kid, compromised_since: since } })) as unknown[];
        } catch (err) {
          if (!(err instanceof DbError)) throw err;
          console.log(JSON.stringify({ ok: false, error: "refused", message: err.message }));
          return 1;
        }
        // A successor at once when the revoked key was the active one, so that no instance that
        // loads its key from here on signs with the compromised one. Under another service secret
        // the service makes it itself when it next loads its key (within a minute).
        if (!box) {
          console.log(JSON.stringify({ ok: true, revoked: rows[0], active_kid: null, note: `${OTHER_SECRET} The service makes its own successor within a minute.` }));
          return 0;
        }
        const active = await activeKey(db, box);
        console.log(JSON.stringify({ ok: true, revoked: rows[0], active_kid: active.kid, note: "running instances stop signing with it within a minute" }));
        return 0;
      });
    },
  },
  backup: {
    usage: "ops backup FILE",
    summary: "a consistent copy of the embedded database, taken while the service runs",
    run: (args, config) => {
      const file = oneArg("backup", args, "ops backup FILE");
      refuseOnPostgres(config, "backup");
      return withOpsTarget(config, (target) => runBackup(target, callerPath(file)));
    },
  },
};

/** The command a line names (two words, or one) and the arguments after it. */
function find(args: string[]): { key: string; command: OpsCommand; rest: string[] } | undefined {
  for (const words of [2, 1]) {
    const key = args.slice(0, words).join(" ");
    if (args.length >= words && OPS_COMMANDS[key]) return { key, command: OPS_COMMANDS[key], rest: args.slice(words) };
  }
  return undefined;
}

export const OPS_LINES: UsageLine[] = Object.values(OPS_COMMANDS).map((c) => ({ synopsis: c.usage, summary: c.summary }));

/** Usage of the ops command args names, or of every ops command. */
export function opsHelp(args: string[]): string {
  const found = find(args.filter((a) => a !== "--help" && a !== "-h"));
  return found ? commandHelp(found.command.usage, [{ synopsis: found.command.usage, summary: found.command.summary }]) : commandHelp("ops <command>", OPS_LINES);
}

export async function runOps(args: string[]): Promise<number> {
  if (args.includes("--help") || args.includes("-h")) {
    console.log(opsHelp(args));
    return 0;
  }
  const found = find(args);
  if (!found) throw new OpsUsageError(`unknown ops command: ${args.join(" ") || "(none)"}`);
  return found.command.run(found.rest, loadConfig());
}
