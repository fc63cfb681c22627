// Where a webhook may go: the pure address classifier (src/webhooks/address.ts), the URL's form
// and the host check with a resolver the test controls (src/webhooks/target.ts).
import { describe, expect, test } from "bun:test";
import { classifyAddress } from "../../src/webhooks/address.ts";
import { parseTargetUrl, TargetRefused, WebhookTargets, type Lookup } from "../../src/webhooks/target.ts";

const reason = (address: string) => {
  const verdict = classifyAddress(address);
  return verdict.public ? "public" : verdict.reason;
};

describe("classifyAddress", () => {
  test("public IPv4 and IPv6 addresses pass", () => {
    for (const address of ["93.184.215.14", "1.1.1.1", "8.8.8.8", "100.63.255.255", "100.128.0.0", "172.15.255.255", "172.32.0.0", "192.167.255.255", "192.169.0.0", "198.17.255.255", "198.20.0.0", "223.255.255.255", "11.0.0.0", "126.255.255.255", "128.0.0.0", "169.253.255.255", "169.255.0.0"]) {
      expect([address, reason(address)]).toEqual([address, "public"]);
    }
    for (const address of ["2606:4700:4700::1111", "2001:4860:4860::8888", "2a00:1450:4001:81b::200e", "2001:200::1", "2003::1", "3ffe::1", "3fff:1000::1", "64:ff9b::5db8:d70e", "::ffff:93.184.215.14", "::ffff:5db8:d70e"]) {
      expect([address, reason(address)]).toEqual([address, "public"]);
    }
  });

  test("every non-public IPv4 block is refused, at both of its ends", () => {
    const cases: [string, string][] = [
      ["0.0.0.0", "unspecified"],
      ["0.255.255.255", "unspecified"],
      ["10.0.0.0", "private"],
      ["10.255.255.255", "private"],
      ["100.64.0.0", "carrier-grade NAT"],
      ["100.127.255.255", "carrier-grade NAT"],
      ["127.0.0.1", "loopback"],
      ["127.255.255.254", "loopback"],
      ["169.254.0.0", "link-local"],
      ["169.254.169.254", "link-local"],
      ["172.16.0.0", "private"],
      ["172.31.255.255", "private"],
      ["192.0.0.8", "IETF protocol-assignment"],
      ["192.0.2.1", "documentation"],
      ["192.88.99.1", "6to4 relay"],
      ["192.168.0.1", "private"],
      ["192.168.255.255", "private"],
      ["198.18.0.0", "benchmarking"],
      ["198.19.255.255", "benchmarking"],
      ["198.51.100.7", "documentation"],
      ["203.0.113.9", "documentation"],
      ["224.0.0.1", "multicast"],
      ["239.255.255.250", "multicast"],
      ["240.0.0.1", "reserved"],
      ["255.255.255.255", "broadcast"],
    ];
    for (const [address, what] of cases) expect([address, reason(address)]).toEqual([address, expect.stringContaining(what)]);
  });

  test("every non-public IPv6 form is refused, IPv4 carried in IPv6 judged by its IPv4 address", () => {
    const cases: [string, string][] = [
      ["::", "unspecified"],
      ["::1", "loopback"],
      ["0:0:0:0:0:0:0:1", "loopback"],
      ["::ffff:127.0.0.1", "IPv4-mapped address of a loopback"],
      ["::ffff:7f00:1", "IPv4-mapped address of a loopback"],
      ["::ffff:10.1.2.3", "IPv4-mapped address of a private"],
      ["::FFFF:169.254.169.254", "IPv4-mapped address of a link-local"],
      ["0:0:0:0:0:ffff:192.168.1.1", "IPv4-mapped address of a private"],
      ["::127.0.0.1", "IPv4-compatible"],
      ["::10.0.0.1", "IPv4-compatible"],
      ["64:ff9b::7f00:1", "NAT64 address of a loopback"],
      ["64:ff9b::10.0.0.1", "NAT64 address of a private"],
      ["64:ff9b:1::1", "local-use NAT64"],
      ["100::1", "discard-only"],
      ["2001::1", "IETF special-purpose"],
      ["2001:1ff:ffff::1", "IETF special-purpose"],
      ["2001:db8::1", "documentation"],
      ["2002:7f00:1::1", "6to4"],
      ["3fff::1", "documentation"],
      ["fc00::1", "unique-local"],
      ["fd12:3456:789a::1", "unique-local"],
      ["fe80::1", "link-local"],
      ["febf:ffff::1", "link-local"],
      ["fec0::1", "site-local"],
      ["ff02::1", "multicast"],
      ["ff0e::101", "multicast"],
      ["4000::1", "not a global unicast"],
      ["5f00::1", "not a global unicast"],
      ["1::1", "not a global unicast"],
    ];
    for (const [address, what] of cases) expect([address, reason(address)]).toEqual([address, expect.stringContaining(what)]);
  });

  test("anything that is not an IP address is refused (names, zone indexes, garbage)", () => {
    for (const text of ["localhost", "example.com", "", "127.0.0.1.", "fe80::1%eth0", "1.2.3", "::ffff:300.1.1.1", "[::1]"]) {
      expect([text, reason(text)]).toEqual([text, "not an IP address"]);
    }
  });
});

describe("the URL's form", () => {
  const refusal = (text: string) => {
    try {
      parseTargetUrl(text);
      return "accepted";
    } catch (err) {
      expect(err).toBeInstanceOf(TargetRefused);
      return (err as Error).message;
    }
  };

  test("https only, at most 2000 characters, no credentials", () => {
    expect(refusal("http://hooks.example.com/x")).toBe("must be https");
    expect(refusal("ftp://hooks.example.com/x")).toBe("must be https");
    expect(refusal("hooks.example.com/x")).toBe("is not a URL");
    expect(refusal("https://user:pass@hooks.example.com/x")).toBe("must not carry a user name or password");
    expect(refusal(`https://hooks.example.com/${"a".repeat(2000)}`)).toBe("is longer than 2000 characters");
    expect(refusal(`https://hooks.example.com/${"a".repeat(2000 - "https://hooks.example.com/".length)}`)).toBe("accepted");
    expect(refusal("https://hooks.example.com:8443/in?x=1")).toBe("accepted");
  });
});

describe("the host check", () => {
  const answers = (map: Record<string, string[]>): Lookup => async (host) => {
    const found = map[host];
    if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: "ENOTFOUND" });
    return found.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
  };
  const lookup = answers({
    "hooks.example.com": ["93.184.215.14"],
    "inside.example.com": ["10.1.2.3"],
    "split.example.com": ["93.184.215.14", "127.0.0.1"],
    "six.example.com": ["fd00::5"],
    "metadata.example.com": ["169.254.169.254"],
  });
  const strict = new WebhookTargets(lookup, false);
  const check = (targets: WebhookTargets, url: string) => targets.check(url).then(() => "accepted", (err: Error) => err.message);

  test("a name resolving to public addresses passes; the first address is the one to connect to", async () => {
    expect(await check(strict, "https://hooks.example.com/in")).toBe("accepted");
    expect(await strict.resolve(new URL("https://hooks.example.com/in"), 1000)).toEqual({ address: "93.184.215.14", family: 4 });
    expect(await check(strict, "https://93.184.215.14/in")).toBe("accepted");
    expect(await check(strict, "https://[2606:4700:4700::1111]/in")).toBe("accepted");
  });

  test("a name with any non-public address is refused, saying why but not which address", async () => {
    expect(await check(strict, "https://inside.example.com/in")).toBe("inside.example.com resolves to a private address");
    expect(await check(strict, "https://split.example.com/in")).toBe("split.example.com resolves to a loopback address");
    expect(await check(strict, "https://six.example.com/in")).toBe("six.example.com resolves to a unique-local (private) address");
    expect(await check(strict, "https://metadata.example.com/in")).toBe("metadata.example.com resolves to a link-local address");
    expect(await check(strict, "https://nowhere.example.com/in")).toBe("nowhere.example.com does not resolve");
  });

  test("IP literals in every spelling the URL parser accepts are judged as the address they are", async () => {
    expect(await check(strict, "https://127.0.0.1/in")).toBe("127.0.0.1 is a loopback address");
    expect(await check(strict, "https://2130706433/in")).toBe("127.0.0.1 is a loopback address");
    expect(await check(strict, "https://0x7f.1/in")).toBe("127.0.0.1 is a loopback address");
    expect(await check(strict, "https://[::1]/in")).toBe("::1 is a loopback address");
    expect(await check(strict, "https://[::ffff:169.254.169.254]/in")).toBe("::ffff:a9fe:a9fe is an IPv4-mapped address of a link-local address");
    expect(await check(strict, "https://0.0.0.0/in")).toBe("0.0.0.0 is an unspecified (this-network) address");
  });

  test("a resolver that hangs is given up on at the deadline", async () => {
    const hanging = new WebhookTargets(() => new Promise(() => {}), false);
    expect(await hanging.resolve(new URL("https://slow.example.com/"), 50).then(() => "resolved", (err: Error) => err.message)).toBe("slow.example.com did not resolve in time");
  });

  test("WEBHOOK_ALLOW_PRIVATE: any address will do, and a new URL needs no resolution at all", async () => {
    const open = new WebhookTargets(lookup, true);
    expect(await check(open, "https://inside.example.com/in")).toBe("accepted");
    expect(await check(open, "https://127.0.0.1:9/in")).toBe("accepted");
    expect(await check(open, "https://nowhere.example.com/in")).toBe("accepted");
    expect(await open.resolve(new URL("https://inside.example.com/in"), 1000)).toEqual({ address: "10.1.2.3", family: 4 });
    // The form still counts.
    expect(await check(open, "http://127.0.0.1/in")).toBe("must be https");
  });
});
