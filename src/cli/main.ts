#!/usr/bin/env bun
// warden command line (README, Command line). Exit 0 on success, 1 on a failed check, 2 on bad usage.
// `warden help COMMAND` and `COMMAND --help` print a command's usage and exit 0.
import { parseArgs } from "node:util";
import { loadConfig } from "../config.ts";
import { SchemaMismatchError, schemaVersion } from "../db/migrate.ts";
import { ScriptUsageError } from "../ops/psql-script.ts";
import { callService, runProtect, runSimulate, runVerify } from "./client.ts";
import { runSignup } from "./account.ts";
import { runProof } from "./proof.ts";
import { runVerifyProof } from "./verify-proof.ts";
import { CliError, callerPath } from "./inputs.ts";
import { OPS_LINES, OpsUsageError, opsHelp, runOps } from "./ops.ts";
import { RefusedError, refuseOnPostgres, runRestore } from "./backup.ts";
import { runMigrate } from "./migrate.ts";
import { POLICY_LINES, PolicyUsageError, runPolicy } from "./policy.ts";
import { APPROVALS_LINES, ApprovalsUsageError, runApprovals } from "./approvals.ts";
import { KEYS_LINES, KeysUsageError, runKeys } from "./keys.ts";
import { MEMBERS_LINES, MembersUsageError, runMembers } from "./members.ts";
import { ENTITIES_LINES, EntitiesUsageError, runEntities } from "./entities.ts";
import { commandHelp, usageTable, type UsageLine } from "./usage.ts";
import { MCP_LINES, McpUsageError, runMcp } from "./mcp.ts";
import pkg from "../../package.json" with { type: "json" };

export class UsageError extends Error {}

interface Command {
  /** The forms of the command, each with what it does (src/cli/usage.ts lays them out). */
  lines: UsageLine[];
  /** After `usage: warden ` in the command's own help, when it has several forms. */
  header?: string;
  run(args: string[]): Promise<number>;
}

const COMMANDS: Record<string, Command> = {
  serve: {
    lines: [{ synopsis: "serve", summary: "run the HTTPS service (applies migrations at start)" }],
    async run(args) {
      parseArgs({ args, options: {}, strict: true });
      const { serve } = await import("../app/server.ts");
      const { stop } = await serve(loadConfig());
      // Graceful: requests in flight finish, then the database closes; exit 0, or 1 if closing failed.
      for (const signal of ["SIGINT", "SIGTERM"] as const) {
        process.once(signal, () =>
          void stop().then(
            () => process.exit(0),
            (err) => {
              console.error(`error: stopping failed: ${(err as Error)?.message ?? err}`);
              process.exit(1);
            },
          ),
        );
      }
      return new Promise<number>(() => {}); // serve until a signal
    },
  },
  signup: {
    lines: [{ synopsis: "signup --email EMAIL --password PASSWORD [--env]", summary: "create an account on WARDEN_URL: prints its session token and first API key (with --env: as export lines for WARDEN_TOKEN and WARDEN_API_KEY)" }],
    run(args) {
      const { values } = parseArgs({ args, options: { email: { type: "string" }, password: { type: "string" }, env: { type: "boolean" } }, strict: true });
      if (!values.email || !values.password) throw new UsageError("signup needs --email EMAIL and --password PASSWORD");
      return runSignup({ email: values.email, password: values.password, env: values.env ?? false });
    },
  },
  simulate: {
    lines: [{ synopsis: "simulate --preset NAME [--request-id ID] [--verify]", summary: "call /v1/simulate on WARDEN_URL with WARDEN_API_KEY" }],
    run(args) {
      const { values } = parseArgs({ args, options: { preset: { type: "string" }, "request-id": { type: "string" }, verify: { type: "boolean" } }, strict: true });
      if (!values.preset) throw new UsageError("simulate needs --preset NAME");
      return runSimulate({ preset: values.preset, requestId: values["request-id"], verify: values.verify ?? false });
    },
  },
  protect: {
    lines: [
      {
        synopsis: "protect --action ACTION [--amount N] [--currency CUR] [--resource R] [--request-id ID]",
        summary: "call /v1/protect with WARDEN_API_KEY: a live decision, stored as a receipt in your log; prints the result",
      },
    ],
    run(args) {
      const options = { action: { type: "string" }, amount: { type: "string" }, currency: { type: "string" }, resource: { type: "string" }, "request-id": { type: "string" } } as const;
      const { values } = parseArgs({ args, options, strict: true });
      if (!values.action) throw new UsageError("protect needs --action ACTION");
      const amount = values.amount === undefined ? undefined : Number(values.amount);
      if (amount !== undefined && (values.amount!.trim() === "" || !Number.isFinite(amount))) throw new UsageError(`--amount takes a number, not ${values.amount}`);
      return runProtect({ action: values.action, resource: values.resource, amount, currency: values.currency }, values["request-id"]);
    },
  },
  proof: {
    lines: [
      {
        synopsis: "proof RECEIPT_ID|FILE|-",
        summary: "with WARDEN_TOKEN, the bundle {receipt, proof, checkpoint} of a stored receipt (its id, or a saved protect result) for verify --proof",
      },
    ],
    run(args) {
      const { positionals } = parseArgs({ args, options: {}, strict: true, allowPositionals: true });
      if (positionals.length !== 1) throw new UsageError("proof needs one RECEIPT_ID, or a FILE that holds a protect result");
      return runProof(positionals[0]);
    },
  },
  verify: {
    header: "verify [--proof] FILE|- [--jwks FILE] [--policy FILE]",
    lines: [
      { synopsis: "verify FILE|- [--jwks FILE] [--policy FILE]", summary: "check a saved result offline against the JWKS; with the policy version it names, decide it again" },
      { synopsis: "verify --proof FILE|- [--jwks FILE]", summary: "check {receipt, proof, checkpoint}: the receipt is in the signed log" },
    ],
    run(args) {
      const { values, positionals } = parseArgs({ args, options: { jwks: { type: "string" }, proof: { type: "string" }, policy: { type: "string" } }, strict: true, allowPositionals: true });
      if (values.proof !== undefined) {
        if (positionals.length !== 0) throw new UsageError("verify --proof FILE takes no other file");
        if (values.policy !== undefined) throw new UsageError("verify --proof checks the log; --policy goes with verify FILE");
        return runVerifyProof({ file: values.proof, jwksFile: values.jwks });
      }
      if (positionals.length !== 1) throw new UsageError("verify needs one FILE (or - for stdin)");
      return runVerify({ file: positionals[0], jwksFile: values.jwks, policyFile: values.policy });
    },
  },
  migrate: {
    lines: [{ synopsis: "migrate", summary: "apply this build's schema to DATABASE_URL or DATA_DIR" }],
    run(args) {
      parseArgs({ args, options: {}, strict: true });
      return runMigrate(loadConfig());
    },
  },
  restore: {
    lines: [{ synopsis: "restore FILE", summary: "make DATA_DIR (new or empty) from an `ops backup` file" }],
    run(args) {
      const { positionals } = parseArgs({ args, options: {}, strict: true, allowPositionals: true });
      if (positionals.length !== 1) throw new UsageError("restore needs one FILE");
      const config = loadConfig();
      refuseOnPostgres(config, "restore");
      return runRestore(config, callerPath(positionals[0]));
    },
  },
  policy: {
    header: "policy <test|impact|publish|diff> ...",
    lines: POLICY_LINES,
    run: runPolicy,
  },
  usage: {
    lines: [{ synopsis: "usage", summary: "each budget and rate window of the active policy with its use in the current window, per key or for the tenant (with WARDEN_TOKEN)" }],
    async run(args) {
      parseArgs({ args, options: {}, strict: true });
      console.log(JSON.stringify(await callService("GET", "/customer/usage", { auth: "token" }), null, 2));
      return 0;
    },
  },
  approvals: {
    header: "approvals <list|show|approve|deny> ...",
    lines: APPROVALS_LINES,
    run: runApprovals,
  },
  keys: {
    header: "keys <list|update|rotate> ...",
    lines: KEYS_LINES,
    run: runKeys,
  },
  members: {
    header: "members <list|remove> ...",
    lines: MEMBERS_LINES,
    run: runMembers,
  },
  entities: {
    lines: ENTITIES_LINES,
    run: runEntities,
  },
  mcp: {
    header: "mcp <gateway|serve> ...",
    lines: MCP_LINES,
    run: runMcp,
  },
  ops: {
    header: "ops <command>",
    lines: OPS_LINES,
    run: runOps,
  },
};

const USAGE = `usage: warden <command> ...   (warden help COMMAND, warden COMMAND --help)
${Object.values(COMMANDS)
  .map((c) => usageTable(c.lines))
  .join("\n")}
${usageTable([
  { synopsis: "help [COMMAND]", summary: "the usage of every command, or of one" },
  { synopsis: "--version", summary: "print the version and the database schema it needs" },
])}
environment of the commands that call the service:
${usageTable([
  { synopsis: "WARDEN_URL", summary: "the service (default https://127.0.0.1:8443)" },
  { synopsis: "WARDEN_INSECURE=1", summary: "accept its self-signed development certificate" },
  { synopsis: "WARDEN_API_KEY", summary: "an API key, for simulate, protect and mcp (the api_key signup prints)" },
  { synopsis: "WARDEN_TOKEN", summary: "a session token, for proof, policy, usage, approvals, keys, members and entities (the token signup prints)" },
])}
exit status: 0 success, 1 a failed check or a refusal, 2 bad usage or input`;

function help(command: string | undefined, rest: string[] = []): string {
  if (command === "ops") return opsHelp(rest);
  const found = command === undefined ? undefined : COMMANDS[command];
  if (command !== undefined && !found) throw new UsageError(`unknown command: ${command}`);
  return found ? commandHelp(found.header ?? command!, found.lines) : USAGE;
}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === "--version" || command === "version") {
    console.log(`warden ${pkg.version} (schema ${schemaVersion()})`);
    return 0;
  }
  if (command === "help" || command === "--help" || command === "-h") {
    console.log(help(rest[0], rest.slice(1)));
    return 0;
  }
  if (command === undefined) {
    console.error(USAGE);
    return 2;
  }
  const found = COMMANDS[command];
  if (!found) throw new UsageError(`unknown command: ${command}`);
  // What follows `--` is another program's (mcp gateway -- CMD ARGS...): its --help is not ours.
  const own = rest.includes("--") ? rest.slice(0, rest.indexOf("--")) : rest;
  if (command !== "ops" && (own.includes("--help") || own.includes("-h"))) {
    console.log(help(command));
    return 0;
  }
  try {
    return await found.run(rest);
  } catch (err) {
    if (!isUsageError(err)) throw err;
    // The usage of this command, not of all of them.
    console.error(`${(err as Error).message}\n${help(command, rest)}`);
    return 2;
  }
}

function isUsageError(err: unknown): boolean {
  return err instanceof UsageError || err instanceof OpsUsageError || err instanceof ApprovalsUsageError || err instanceof KeysUsageError || err instanceof MembersUsageError || err instanceof EntitiesUsageError || err instanceof McpUsageError || err instanceof ScriptUsageError || (err as { code?: string })?.code?.startsWith?.("ERR_PARSE_ARGS") === true;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    // A bad policy or cases file: the message names the file and JSON path; the usage would bury it.
    if (err instanceof PolicyUsageError) {
      console.error(`error: ${err.message}`);
      process.exit(2);
    }
    // A file that is not what the command takes, a missing setting, the service's refusal: one line says which.
    if (err instanceof CliError) {
      console.error(`error: ${err.message}`);
      process.exit(err.exitCode);
    }
    const usage = isUsageError(err);
    // A database of another schema, or a request this database cannot serve: the operator's call to fix, exit 2.
    const refused = err instanceof SchemaMismatchError || err instanceof RefusedError;
    console.error(usage ? `${(err as Error).message}\n${USAGE}` : `error: ${(err as Error).message}`);
    process.exit(usage || refused ? 2 : 1);
  },
);
