// Which IP addresses a webhook may reach (docs/security.md, "Webhooks"): only public ones, so that
// a tenant cannot make the service call into its own network, the cloud's metadata endpoint or
// anything else behind it (server-side request forgery). IPv4 is refused by the blocks of the IANA
// special-purpose registry that are not globally reachable; IPv6 must be global unicast (2000::/3)
// outside the special blocks in it, and an IPv6 form that carries an IPv4 address (mapped,
// NAT64) is judged by that IPv4 address. Pure: an address in, a verdict out.
import { isIPv4, isIPv6 } from "node:net";

export type AddressVerdict = { public: true } | { public: false; reason: string };

const PUBLIC: AddressVerdict = { public: true };
const refused = (reason: string): AddressVerdict => ({ public: false, reason });

/** [first address, prefix length, what it is]; the first block that holds an address decides. */
const V4_BLOCKS: [string, number, string][] = [
  ["0.0.0.0", 8, "an unspecified (this-network) address"],
  ["10.0.0.0", 8, "a private address"],
  ["100.64.0.0", 10, "a carrier-grade NAT (shared) address"],
  ["127.0.0.0", 8, "a loopback address"],
  ["169.254.0.0", 16, "a link-local address"],
  ["172.16.0.0", 12, "a private address"],
  ["192.0.0.0", 24, "an IETF protocol-assignment address"],
  ["192.0.2.0", 24, "a documentation address"],
  ["192.88.99.0", 24, "a 6to4 relay address"],
  ["192.168.0.0", 16, "a private address"],
  ["198.18.0.0", 15, "a benchmarking address"],
  ["198.51.100.0", 24, "a documentation address"],
  ["203.0.113.0", 24, "a documentation address"],
  ["224.0.0.0", 4, "a multicast address"],
  ["255.255.255.255", 32, "the broadcast address"],
  ["240.0.0.0", 4, "a reserved address"],
];

/** [first address, prefix length, what it is] within IPv6, checked before the global-unicast rule. */
const V6_BLOCKS: [string, number, string][] = [
  ["64:ff9b:1::", 48, "a local-use NAT64 address"],
  ["100::", 64, "a discard-only address"],
  ["2001:db8::", 32, "a documentation address"],
  ["2001::", 23, "an IETF special-purpose address (Teredo, benchmarking, ORCHID)"],
  ["2002::", 16, "a 6to4 address"],
  ["3fff::", 20, "a documentation address"],
  ["fc00::", 7, "a unique-local (private) address"],
  ["fe80::", 10, "a link-local address"],
  ["fec0::", 10, "a site-local address"],
  ["ff00::", 8, "a multicast address"],
];

function v4Bits(address: string): number {
  return address.split(".").reduce((n, part) => n * 256 + Number(part), 0);
}

function inV4(bits: number, [first, prefix]: [string, number, string]): boolean {
  const size = 2 ** (32 - prefix);
  return Math.floor(bits / size) === Math.floor(v4Bits(first) / size);
}

/** The 16 bytes of an IPv6 address (isIPv6 has accepted it; a zone index is not one). */
function v6Bytes(address: string): number[] {
  let text = address;
  const tail: number[] = [];
  // A dotted IPv4 tail (::ffff:10.0.0.1) is its last four bytes.
  const dotted = /^(.*:)(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    text = `${dotted[1]}0:0`;
    tail.push(...dotted[2]!.split(".").map(Number));
  }
  const [head, rest] = text.split("::") as [string, string | undefined];
  const groups = (part: string | undefined) => (part ? part.split(":").map((g) => parseInt(g, 16)) : []);
  const before = groups(head);
  const after = groups(rest);
  const words = rest === undefined ? before : [...before, ...new Array(8 - before.length - after.length).fill(0), ...after];
  const bytes = words.flatMap((w) => [w >> 8, w & 0xff]);
  if (tail.length) bytes.splice(12, 4, ...tail);
  return bytes;
}

function inV6(bytes: number[], [first, prefix]: [string, number, string]): boolean {
  const base = v6Bytes(first);
  for (let bit = 0; bit < prefix; bit++) {
    const mask = 0x80 >> bit % 8;
    if ((bytes[bit >> 3]! & mask) !== (base[bit >> 3]! & mask)) return false;
  }
  return true;
}

function classifyV4(address: string): AddressVerdict {
  const bits = v4Bits(address);
  const block = V4_BLOCKS.find((b) => inV4(bits, b));
  return block ? refused(block[2]) : PUBLIC;
}

function classifyV6(address: string): AddressVerdict {
  const bytes = v6Bytes(address);
  const zeros = (from: number, to: number) => bytes.slice(from, to).every((b) => b === 0);
  const v4 = bytes.slice(12).join(".");
  if (zeros(0, 16)) return refused("an unspecified address");
  if (zeros(0, 15) && bytes[15] === 1) return refused("a loopback address");
  if (zeros(0, 10) && bytes[10] === 0xff && bytes[11] === 0xff) {
    const inner = classifyV4(v4);
    return inner.public ? PUBLIC : refused(`an IPv4-mapped address of ${inner.reason}`);
  }
  if (zeros(0, 12)) return refused("an IPv4-compatible address (deprecated)");
  // NAT64's well-known prefix 64:ff9b::/96 reaches the IPv4 address it carries.
  if (bytes[0] === 0 && bytes[1] === 0x64 && bytes[2] === 0xff && bytes[3] === 0x9b && zeros(4, 12)) {
    const inner = classifyV4(v4);
    return inner.public ? PUBLIC : refused(`a NAT64 address of ${inner.reason}`);
  }
  const block = V6_BLOCKS.find((b) => inV6(bytes, b));
  if (block) return refused(block[2]);
  // Global unicast is 2000::/3; everything else is reserved or special.
  return (bytes[0]! & 0xe0) === 0x20 ? PUBLIC : refused("not a global unicast address");
}

/** Whether a webhook may connect to this IP address; why not, when it may not. Anything but an IP address is refused. */
export function classifyAddress(address: string): AddressVerdict {
  if (isIPv4(address)) return classifyV4(address);
  if (isIPv6(address) && !address.includes("%")) return classifyV6(address.toLowerCase());
  return refused("not an IP address");
}
