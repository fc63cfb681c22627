// What the MCP gateway asks warden about a call (docs/mcp.md, "What warden is asked"): the action's
// name and the arguments flattened into a context that ProtectInput accepts, whatever the arguments.
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { Value } from "@sinclair/typebox/value";
import { ProtectInput } from "../../src/decide/policy.ts";
import { ARGUMENT_ENTRIES_MAX, argumentsHash, argumentsTooLarge, callContext, flattenArguments, serverPart, toolAction } from "../../src/mcp/context.ts";
import { upstreamEnv } from "../../src/mcp/upstream.ts";
import { sha256Hex } from "../../src/crypto/canonical.ts";

describe("the action of a tools/call", () => {
  test("mcp.<server>.<tool>; the server's name sanitized, a tool outside the pattern refused", () => {
    expect(toolAction("files", "read_file")).toEqual({ action: "mcp.files.read_file" });
    expect(toolAction("gh", "repos/list-issues.v2")).toEqual({ action: "mcp.gh.repos/list-issues.v2" });
    expect(serverPart("Secure Filesystem Server (v2)")).toBe("Secure_Filesystem_Server__v2_");
    expect(serverPart("a.b")).toBe("a_b"); // a dot would make the server part ambiguous
    expect(serverPart("  ")).toBe("upstream");
    expect(serverPart(undefined)).toBe("upstream");
    expect(toolAction("files", "read file")).toHaveProperty("error");
    expect(toolAction("files", "lire_fichier_é")).toHaveProperty("error");
    expect(toolAction("files", "")).toHaveProperty("error");
    expect(toolAction("files", 42)).toHaveProperty("error");
    expect(toolAction("files", "x".repeat(200))).toHaveProperty("error");
  });
});

describe("the arguments in context", () => {
  test("scalars by dotted path, object keys in JCS order, array items by index; null and empty add nothing", () => {
    const flat = flattenArguments({ z: 1, a: { c: true, b: "x" }, list: [{ path: "/a" }, "b"], none: null, empty: {}, no: [] });
    expect(flat).toEqual({ entries: { "a.b": "x", "a.c": true, "list.0.path": "/a", "list.1": "b", z: 1 }, omitted: 0, truncated: 0 });
    expect(Object.keys(flat.entries)).toEqual(["a.b", "a.c", "list.0.path", "list.1", "z"]);
  });

  test("the same arguments in another key order give the same context", async () => {
    const one = await callContext({ b: 1, a: { y: 2, x: 3 } });
    const two = await callContext({ a: { x: 3, y: 2 }, b: 1 });
    expect(JSON.stringify(one.context)).toBe(JSON.stringify(two.context));
    expect(Object.keys(one.context)).toEqual(["a.x", "a.y", "b", "arguments_sha256", "arguments_omitted", "arguments_truncated"]);
  });

  test("a long string keeps its first 500 characters, never half a surrogate pair; counted", () => {
    const long = flattenArguments({ s: "a".repeat(600) });
    expect(long.entries.s).toBe("a".repeat(500));
    expect(long.truncated).toBe(1);
    const emoji = flattenArguments({ s: "a".repeat(499) + "😀" + "b" });
    expect(emoji.entries.s).toBe("a".repeat(499));
  });

  test("a path that is no valid key, a reserved key, and scalars past the cap are omitted and counted", () => {
    const args: Record<string, unknown> = { "bad key": 1, ["k".repeat(65)]: 2, arguments_sha256: "forged", ok: 3 };
    expect(flattenArguments(args)).toEqual({ entries: { ok: 3 }, omitted: 3, truncated: 0 });
    const many = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`k${String(i).padStart(2, "0")}`, i]));
    const flat = flattenArguments(many);
    expect(Object.keys(flat.entries)).toHaveLength(ARGUMENT_ENTRIES_MAX);
    expect(flat.entries.k00).toBe(0);
    expect(flat.entries.k28).toBe(28);
    expect(flat.entries.k29).toBeUndefined();
    expect(flat.omitted).toBe(40 - ARGUMENT_ENTRIES_MAX);
  });

  test("the gateway's keys cannot be forged by an argument", async () => {
    const { context } = await callContext({ arguments_sha256: "0x00", arguments_omitted: 0 });
    expect(context.arguments_sha256).toBe(await sha256Hex('{"arguments_omitted":0,"arguments_sha256":"0x00"}'));
    expect(context.arguments_omitted).toBe(2);
  });

  test("the hash is the SHA-256 of the JCS form; no arguments hash as {}", async () => {
    expect(await argumentsHash({ b: [1, 2.5, "é"], a: null })).toBe(await sha256Hex('{"a":null,"b":[1,2.5,"é"]}'));
    expect(await argumentsHash(undefined)).toBe(await sha256Hex("{}"));
  });

  test("any JSON arguments give an input ProtectInput accepts", async () => {
    await fc.assert(
      fc.asyncProperty(fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 4 })), async (args) => {
        const { context } = await callContext(args);
        expect(Value.Check(ProtectInput, { action: "mcp.x.y", context })).toBe(true);
      }),
      { numRuns: 200 },
    );
  });

  test("arguments too deep or too large to decide are named as such", () => {
    let deep: unknown = "x";
    for (let i = 0; i < 40; i++) deep = { d: deep };
    expect(argumentsTooLarge(deep)).toContain("too deep");
    expect(argumentsTooLarge({ s: "x".repeat(5 * 1024 * 1024) })).toContain("too large to decide");
    expect(argumentsTooLarge({ a: { b: [1, 2] } })).toBeUndefined();
  });
});

test("the upstream command's environment has none of warden's variables", () => {
  expect(upstreamEnv({ PATH: "/bin", WARDEN_API_KEY: "wk_x", WARDEN_URL: "u", GITHUB_TOKEN: "g", EMPTY: undefined })).toEqual({ PATH: "/bin", GITHUB_TOKEN: "g" });
});
