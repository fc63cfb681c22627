// Inclusion proofs (RFC 9162 section 2.1.3.2) checked with WebCrypto only, so the same code runs
// in the CLI (`warden verify --proof`) and in the console's browser-side "verify". The walk that
// decides on which side each path entry joins is shared with merkle.ts's synchronous verifier.

/**
 * For each of `pathLength` proof entries, whether it is the left operand of the next node hash
 * (true) or the right one; undefined when no proof of that length fits leaf `index` of `size`.
 */
export function inclusionSides(index: number, size: number, pathLength: number): boolean[] | undefined {
  if (!Number.isSafeInteger(index) || !Number.isSafeInteger(size) || index < 0 || index >= size) return undefined;
  // Plain numbers: trees here stay far below 2^53 leaves; BigInt-free shifts by division.
  let fn = index;
  let sn = size - 1;
  const sides: boolean[] = [];
  for (let i = 0; i < pathLength; i++) {
    if (sn === 0) return undefined;
    if (fn % 2 === 1 || fn === sn) {
      sides.push(true);
      if (fn % 2 === 0) {
        while (fn % 2 === 0 && fn !== 0) {
          fn = Math.floor(fn / 2);
          sn = Math.floor(sn / 2);
        }
      }
    } else {
      sides.push(false);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 ? sides : undefined;
}

async function sha256(prefix: number, ...parts: Uint8Array[]): Promise<Uint8Array> {
  const bytes = new Uint8Array(1 + parts.reduce((n, p) => n + p.length, 0));
  bytes[0] = prefix;
  let offset = 1;
  for (const p of parts) {
    bytes.set(p, offset);
    offset += p.length;
  }
  return new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
}

/** SHA-256(0x00 ‖ entry): a leaf can never hash like an inner node. */
export function leafHashAsync(entry: Uint8Array): Promise<Uint8Array> {
  return sha256(0x00, entry);
}

/** Does `path` prove leaf hash `leaf` at `index` in the tree of `size` whose root is `root`? */
export async function verifyInclusionAsync(index: number, size: number, leaf: Uint8Array, path: readonly Uint8Array[], root: Uint8Array): Promise<boolean> {
  const sides = inclusionSides(index, size, path.length);
  if (!sides) return false;
  let r = leaf;
  for (let i = 0; i < path.length; i++) r = sides[i] ? await sha256(0x01, path[i], r) : await sha256(0x01, r, path[i]);
  if (r.length !== root.length) return false;
  let diff = 0;
  for (let i = 0; i < r.length; i++) diff |= r[i] ^ root[i];
  return diff === 0;
}
