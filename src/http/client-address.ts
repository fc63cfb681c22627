// Who is on the other end, for brute-force limits and security events. The socket's peer
// address counts, unless TRUST_PROXY=1 says a proxy we run sits in front: then the address that
// proxy appended to X-Forwarded-For (the right-most entry) counts. Entries further left were
// sent by the client and prove nothing.
import { isIP } from "node:net";

/** The client address of a request, normalised, or undefined when nothing usable is known. */
export function clientAddress(peer: string | undefined, forwardedFor: string | null, trustProxy: boolean): string | undefined {
  if (trustProxy && forwardedFor) {
    const last = forwardedFor.split(",").map((s) => s.trim()).filter(Boolean).at(-1);
    const parsed = last === undefined ? undefined : normaliseAddress(last);
    if (parsed) return parsed;
  }
  return peer === undefined ? undefined : normaliseAddress(peer);
}

/** IPv4 as is; IPv6 expanded and lower-cased; IPv4-mapped IPv6 as IPv4; zone ids dropped. */
export function normaliseAddress(raw: string): string | undefined {
  let address = raw.trim();
  if (address.startsWith("[") && address.endsWith("]")) address = address.slice(1, -1);
  address = address.replace(/%.*$/, "");
  const kind = isIP(address);
  if (kind === 4) return address;
  if (kind !== 6) return undefined;
  const groups = expandIpv6(address);
  // ::ffff:a.b.c.d is an IPv4 client on a dual-stack socket.
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return [groups[6] >> 8, groups[6] & 255, groups[7] >> 8, groups[7] & 255].join(".");
  }
  return groups.map((g) => g.toString(16)).join(":");
}

/**
 * The key a limit counts under: an IPv4 address, or the /64 an IPv6 address belongs to (one
 * customer usually holds a whole /64, so single addresses would be free to rotate).
 */
export function addressBucket(address: string | undefined): string {
  if (address === undefined) return "unknown";
  if (isIP(address) !== 6) return address;
  return `${expandIpv6(address).slice(0, 4).map((g) => g.toString(16)).join(":")}::/64`;
}

/**
 * The wider key an IPv6 address also counts under: its /48, one site's allocation, which holds
 * 65,536 /64s. None for IPv4 (or an unknown address).
 */
export function networkBucket(address: string | undefined): string | undefined {
  if (address === undefined || isIP(address) !== 6) return undefined;
  return `${expandIpv6(address).slice(0, 3).map((g) => g.toString(16)).join(":")}::/48`;
}

function expandIpv6(address: string): number[] {
  let text = address.toLowerCase();
  // A trailing dotted IPv4 part stands for the last two groups.
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted[1].split(".").map(Number);
    text = text.slice(0, -dotted[1].length) + `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.includes("::") ? text.split("::") : [text, undefined];
  const left = head ? head.split(":") : [];
  const right = tail ? tail.split(":") : [];
  const missing = tail === undefined ? 0 : 8 - left.length - right.length;
  return [...left, ...Array(missing).fill("0"), ...right].map((g) => parseInt(g, 16));
}
