// The pure parts of a key's rules: CIDR blocks and action patterns (src/keys/cidr.ts, rules.ts).
import { describe, expect, test } from "bun:test";
import { addressAllowed, parseCidr } from "../../src/keys/cidr.ts";
import { actionAllowed, keyRulesOf } from "../../src/keys/rules.ts";

const NONE = { expires_ms: null, enabled: true, actions: null, protect_per_day: null, per_second: null, burst: null, allowed_ips: null, overlap_ms: null };

describe("parseCidr and addressAllowed", () => {
  test("IPv4 blocks, single hosts, /0; host bits beyond the prefix and malformed text are refused", () => {
    for (const bad of ["10.0.0.1/8", "10.0.0.0/33", "10.0.0.0/", "10.0.0/8", "256.0.0.0/8", "nonsense", "10.0.0.0/08x", "::1/129", "2001:db8::1/32"]) expect(parseCidr(bad)).toBeUndefined();
    const blocks = ["10.0.0.0/8", "192.0.2.9", "172.16.0.0/12"].map((b) => parseCidr(b)!);
    for (const inside of ["10.255.255.255", "10.0.0.0", "192.0.2.9", "172.31.0.1"]) expect(addressAllowed(blocks, inside)).toBe(true);
    for (const outside of ["11.0.0.0", "192.0.2.8", "172.32.0.1", "9.255.255.255"]) expect(addressAllowed(blocks, outside)).toBe(false);
    expect(addressAllowed([parseCidr("0.0.0.0/0")!], "203.0.113.1")).toBe(true);
  });

  test("IPv6 blocks in any spelling; a family never matches the other; unknown addresses never match", () => {
    const blocks = ["2001:db8::/32", "fe80::/10", "::1", "2001:db8:abcd:12::/64"].map((b) => parseCidr(b)!);
    // As client-address.ts gives them: expanded, lower case.
    for (const inside of ["2001:db8:0:0:0:0:0:1", "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", "fe80:0:0:0:0:0:0:1", "febf:0:0:0:0:0:0:1", "0:0:0:0:0:0:0:1"]) {
      expect(addressAllowed(blocks, inside)).toBe(true);
    }
    for (const outside of ["2001:db9:0:0:0:0:0:0", "fec0:0:0:0:0:0:0:1", "0:0:0:0:0:0:0:2", "10.0.0.1"]) expect(addressAllowed(blocks, outside)).toBe(false);
    expect(addressAllowed([parseCidr("::/0")!], "10.0.0.1")).toBe(false);
    expect(addressAllowed([parseCidr("0.0.0.0/0")!], undefined)).toBe(false);
    expect(addressAllowed([parseCidr("::ffff:0.0.0.0/96")!], "0:0:0:0:0:ffff:a00:1")).toBe(true);
    expect(parseCidr("2001:db8::/127")).toEqual({ v6: true, words: [0x20010db8, 0, 0, 0], prefix: 127 });
  });
});

describe("keyRulesOf and actionAllowed", () => {
  test("a key with none of the properties has no rules (the hot path's single check)", () => {
    expect(keyRulesOf(NONE)).toBeNull();
    for (const change of [{ expires_ms: 1 }, { enabled: false }, { actions: ["a"] }, { protect_per_day: 1 }, { per_second: 1 }, { allowed_ips: ["10.0.0.0/8"] }, { overlap_ms: 1 }]) {
      expect(keyRulesOf({ ...NONE, ...change })).not.toBeNull();
    }
  });

  test("exact names, and patterns ending in * as prefixes, as in policies", () => {
    const rules = keyRulesOf({ ...NONE, actions: ["payment.send", "document.*", "mcp.github.*"] })!;
    for (const yes of ["payment.send", "document.read", "document.", "mcp.github.create_issue"]) expect(actionAllowed(rules, yes)).toBe(true);
    for (const no of ["payment.sendx", "payment", "documents.read", "mcp.gitlab.x", "PAYMENT.SEND"]) expect(actionAllowed(rules, no)).toBe(false);
    expect(actionAllowed(keyRulesOf({ ...NONE, actions: ["*"] })!, "anything")).toBe(true);
    expect(keyRulesOf({ ...NONE, per_second: 5 })!.rate).toEqual({ perSecond: 5, burst: 5 });
  });
});
