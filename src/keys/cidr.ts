// Address ranges of a key's allowed_ips (docs/api.md, "Keys for agents"): IPv4 and IPv6 CIDR
// blocks, matched against the client address src/http/client-address.ts resolves. An IPv4 client
// on a dual-stack socket arrives there as IPv4, so an IPv4 block matches it.
import { isIP } from "node:net";

/** A parsed block: the family, the address as 32-bit words (1 for IPv4, 4 for IPv6), the prefix. */
export interface Cidr {
  v6: boolean;
  words: number[];
  prefix: number;
}

function words(address: string): number[] | undefined {
  const kind = isIP(address);
  if (kind === 4) {
    const [a, b, c, d] = address.split(".").map(Number) as [number, number, number, number];
    return [((a << 24) | (b << 16) | (c << 8) | d) >>> 0];
  }
  if (kind !== 6) return undefined;
  let text = address.toLowerCase();
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted[1]!.split(".").map(Number) as [number, number, number, number];
    text = text.slice(0, -dotted[1]!.length) + `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.includes("::") ? text.split("::") : [text, undefined];
  const left = head ? head.split(":") : [];
  const right = tail ? tail.split(":") : [];
  const groups = [...left, ...Array(tail === undefined ? 0 : 8 - left.length - right.length).fill("0"), ...right].map((g) => parseInt(g, 16));
  const out: number[] = [];
  for (let i = 0; i < 8; i += 2) out.push(((groups[i]! << 16) | groups[i + 1]!) >>> 0);
  return out;
}

function maskOf(prefix: number, word: number): number {
  const bits = Math.min(32, Math.max(0, prefix - word * 32));
  return bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
}

/** A block as `addr/prefix` or a bare address (one host); undefined when malformed or host bits are set. */
export function parseCidr(text: string): Cidr | undefined {
  const slash = text.indexOf("/");
  const address = slash < 0 ? text : text.slice(0, slash);
  const parsed = words(address);
  if (!parsed) return undefined;
  const v6 = parsed.length === 4;
  const max = v6 ? 128 : 32;
  const prefixText = slash < 0 ? String(max) : text.slice(slash + 1);
  if (!/^\d{1,3}$/.test(prefixText)) return undefined;
  const prefix = Number(prefixText);
  if (prefix > max) return undefined;
  if (parsed.some((w, i) => (w & ~maskOf(prefix, i)) >>> 0 !== 0)) return undefined;
  return { v6, words: parsed, prefix };
}

/** Whether an address (as client-address.ts gives it) lies in one of the blocks. */
export function addressAllowed(blocks: readonly Cidr[], address: string | undefined): boolean {
  if (address === undefined) return false;
  const parsed = words(address);
  if (!parsed) return false;
  const v6 = parsed.length === 4;
  for (const block of blocks) {
    if (block.v6 !== v6) continue;
    let inside = true;
    for (let i = 0; i < parsed.length && inside; i++) inside = (parsed[i]! & maskOf(block.prefix, i)) >>> 0 === block.words[i];
    if (inside) return true;
  }
  return false;
}
