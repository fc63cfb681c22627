// The arguments of `warden ops signing-key revoke`: a kid is an RFC 7638 thumbprint in base64url,
// which begins with "-" one time in 64 and must still be read as the KID, not as an option.
import { describe, expect, test } from "bun:test";
import { generateSigningKey } from "../../src/crypto/signature.ts";
import { OpsUsageError, revokeArgs } from "../../src/cli/ops.ts";

const SINCE = "2026-01-01T00:00:00Z";

describe("ops signing-key revoke arguments", () => {
  test("a kid that begins with '-' is the KID, before or after the option, with or without '--'", async () => {
    let kid = "";
    while (!kid.startsWith("-")) kid = (await generateSigningKey()).kid;
    for (const args of [[kid, "--compromised-since", SINCE], ["--compromised-since", SINCE, kid], ["--compromised-since", SINCE, "--", kid], [`--compromised-since=${SINCE}`, kid]]) {
      expect(revokeArgs(args)).toEqual({ kid, since: SINCE });
    }
  });

  test("anything else is bad usage (exit 2)", () => {
    const kid = "A".repeat(43);
    const thrown = (args: string[]) => {
      try {
        revokeArgs(args);
      } catch (err) {
        return err;
      }
    };
    for (const args of [[kid], ["--compromised-since", SINCE], [kid, kid, "--compromised-since", SINCE], [kid, "--compromised-since", "yesterday-ish"], [kid, "--compromised-since", SINCE, "--other"], [kid, "-x", "--compromised-since", SINCE]]) {
      const err = thrown(args);
      expect(err instanceof OpsUsageError || (err as { code?: string } | undefined)?.code?.startsWith("ERR_PARSE_ARGS")).toBe(true);
    }
  });
});
