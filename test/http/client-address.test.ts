import { describe, expect, test } from "bun:test";
import { addressBucket, clientAddress, normaliseAddress } from "../../src/http/client-address.ts";

describe("normaliseAddress", () => {
  test("IPv4 as is, IPv6 expanded and lower-cased, mapped IPv4 unwrapped, zone ids and brackets dropped", () => {
    expect(normaliseAddress("203.0.113.9")).toBe("203.0.113.9");
    expect(normaliseAddress("2001:DB8::1")).toBe("2001:db8:0:0:0:0:0:1");
    expect(normaliseAddress("[2001:db8::1]")).toBe("2001:db8:0:0:0:0:0:1");
    expect(normaliseAddress("fe80::1%eth0")).toBe("fe80:0:0:0:0:0:0:1");
    expect(normaliseAddress("::ffff:198.51.100.7")).toBe("198.51.100.7");
    expect(normaliseAddress("::ffff:c633:6407")).toBe("198.51.100.7");
    expect(normaliseAddress("::")).toBe("0:0:0:0:0:0:0:0");
    expect(normaliseAddress("::1")).toBe("0:0:0:0:0:0:0:1");
  });

  test("anything else is no address", () => {
    for (const bad of ["", "unknown", "1.2.3", "1.2.3.4.5", "2001:db8::g", "example.com", "1.2.3.4:80"]) expect(normaliseAddress(bad)).toBeUndefined();
  });
});

describe("addressBucket", () => {
  test("IPv6 by its /64, IPv4 by the address", () => {
    expect(addressBucket("2001:db8:1:2:3:4:5:6")).toBe("2001:db8:1:2::/64");
    expect(addressBucket(normaliseAddress("2001:db8:1:2::ffff"))).toBe("2001:db8:1:2::/64");
    expect(addressBucket(normaliseAddress("2001:db8:1:3::1"))).toBe("2001:db8:1:3::/64");
    expect(addressBucket("203.0.113.9")).toBe("203.0.113.9");
    expect(addressBucket(undefined)).toBe("unknown");
  });
});

describe("clientAddress", () => {
  test("without TRUST_PROXY only the peer counts", () => {
    expect(clientAddress("203.0.113.9", "198.51.100.1", false)).toBe("203.0.113.9");
    expect(clientAddress(undefined, "198.51.100.1", false)).toBeUndefined();
  });

  test("with TRUST_PROXY the right-most X-Forwarded-For entry counts, else the peer", () => {
    expect(clientAddress("10.0.0.1", "1.1.1.1, 198.51.100.1", true)).toBe("198.51.100.1");
    expect(clientAddress("10.0.0.1", "198.51.100.1 ,", true)).toBe("198.51.100.1");
    expect(clientAddress("10.0.0.1", "garbage", true)).toBe("10.0.0.1");
    expect(clientAddress("10.0.0.1", null, true)).toBe("10.0.0.1");
  });
});
