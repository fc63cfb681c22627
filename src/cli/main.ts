#!/usr/bin/env bun
// warden command line (contract section 7). Exit 0 on success, 1 on a failed check, 2 on bad usage.
import { parseArgs } from "node:util";
import { loadConfig } from "../config.ts";
import { runSimulate, runVerify } from "./client.ts";
import { runVerifyProof } from "./verify-proof.ts";
import { OPS_USAGE, OpsUsageError, runOps } from "./ops.ts";
import { POLICY_USAGE, PolicyUsageError, runPolicy } from "./policy.ts";

const USAGE = `usage: warden <command>
  serve                                   run the HTTPS service
  simulate --preset NAME [--request-id ID] [--verify]
                                          call /v1/simulate on WARDEN_URL with WARDEN_API_KEY
  verify FILE|- [--jwks FILE]             check a saved result offline against the JWKS
  verify --proof FILE|- [--jwks FILE]     check {receipt, proof, checkpoint}: the receipt is in the signed log
${POLICY_USAGE}
${OPS_USAGE}`;

export class UsageError extends Error {}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case "serve": {
      parseArgs({ args: rest, options: {}, strict: true });
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
    }
    case "simulate": {
      const { values } = parseArgs({ args: rest, options: { preset: { type: "string" }, "request-id": { type: "string" }, verify: { type: "boolean" } }, strict: true });
      if (!values.preset) throw new UsageError("simulate needs --preset NAME");
      return runSimulate({ preset: values.preset, requestId: values["request-id"], verify: values.verify ?? false });
    }
    case "verify": {
      const { values, positionals } = parseArgs({ args: rest, options: { jwks: { type: "string" }, proof: { type: "string" } }, strict: true, allowPositionals: true });
      if (values.proof !== undefined) {
        if (positionals.length !== 0) throw new UsageError("verify --proof FILE takes no other file");
        return runVerifyProof({ file: values.proof, jwksFile: values.jwks });
      }
      if (positionals.length !== 1) throw new UsageError("verify needs one FILE (or - for stdin)");
      return runVerify({ file: positionals[0], jwksFile: values.jwks });
    }
    case "ops":
      return runOps(rest);
    case "policy":
      return runPolicy(rest);
    case undefined:
    case "help":
    case "--help":
      console.log(USAGE);
      return command === undefined ? 2 : 0;
    default:
      throw new UsageError(`unknown command: ${command}`);
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    // A bad policy or cases file: the message names the file and JSON path; the usage would bury it.
    if (err instanceof PolicyUsageError) {
      console.error(`error: ${err.message}`);
      process.exit(2);
    }
    const usage = err instanceof UsageError || err instanceof OpsUsageError || (err as { code?: string })?.code?.startsWith?.("ERR_PARSE_ARGS");
    console.error(usage ? `${(err as Error).message}\n${USAGE}` : `error: ${(err as Error).message}`);
    process.exit(usage ? 2 : 1);
  },
);
