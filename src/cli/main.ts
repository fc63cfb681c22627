#!/usr/bin/env bun
// warden command line (contract section 7). Exit 0 on success, 1 on a failed check, 2 on bad usage.
// `warden help COMMAND` and `COMMAND --help` print a command's usage and exit 0.
import { parseArgs } from "node:util";
import { loadConfig } from "../config.ts";
import { SchemaMismatchError, schemaVersion } from "../db/migrate.ts";
import { ScriptUsageError } from "../ops/psql-script.ts";
import { runSimulate, runVerify } from "./client.ts";
import { runVerifyProof } from "./verify-proof.ts";
import { CliError, callerPath } from "./inputs.ts";
import { OPS_LINES, OpsUsageError, opsHelp, runOps } from "./ops.ts";
import { RefusedError, refuseOnPostgres, runRestore } from "./backup.ts";
import { runMigrate } from "./migrate.ts";
import { POLICY_LINES, PolicyUsageError, runPolicy } from "./policy.ts";
import { commandHelp, usageTable, type UsageLine } from "./usage.ts";
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
  simulate: {
    lines: [{ synopsis: "simulate --preset NAME [--request-id ID] [--verify]", summary: "call /v1/simulate on WARDEN_URL with WARDEN_API_KEY" }],
    run(args) {
      const { values } = parseArgs({ args, options: { preset: { type: "string" }, "request-id": { type: "string" }, verify: { type: "boolean" } }, strict: true });
      if (!values.preset) throw new UsageError("simulate needs --preset NAME");
      return runSimulate({ preset: values.preset, requestId: values["request-id"], verify: values.verify ?? false });
    },
  },
  verify: {
    header: "verify [--proof] FILE|- [--jwks FILE]",
    lines: [
      { synopsis: "verify FILE|- [--jwks FILE]", summary: "check a saved result offline against the JWKS" },
      { synopsis: "verify --proof FILE|- [--jwks FILE]", summary: "check {receipt, proof, checkpoint}: the receipt is in the signed log" },
    ],
    run(args) {
      const { values, positionals } = parseArgs({ args, options: { jwks: { type: "string" }, proof: { type: "string" } }, strict: true, allowPositionals: true });
      if (values.proof !== undefined) {
        if (positionals.length !== 0) throw new UsageError("verify --proof FILE takes no other file");
        return runVerifyProof({ file: values.proof, jwksFile: values.jwks });
      }
      if (positionals.length !== 1) throw new UsageError("verify needs one FILE (or - for stdin)");
      return runVerify({ file: positionals[0], jwksFile: values.jwks });
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
])}`;

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
  if (command !== "ops" && (rest.includes("--help") || rest.includes("-h"))) {
    console.log(help(command));
    return 0;
  }
  return found.run(rest);
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
    const usage = err instanceof UsageError || err instanceof OpsUsageError || err instanceof ScriptUsageError || (err as { code?: string })?.code?.startsWith?.("ERR_PARSE_ARGS");
    // A database of another schema, or a request this database cannot serve: the operator's call to fix, exit 2.
    const refused = err instanceof SchemaMismatchError || err instanceof RefusedError;
    console.error(usage ? `${(err as Error).message}\n${USAGE}` : `error: ${(err as Error).message}`);
    process.exit(usage || refused ? 2 : 1);
  },
);
