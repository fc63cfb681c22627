// The receipt log as a Merkle tree exactly as RFC 9162 section 2.1 defines it: tree heads,
// inclusion proofs (2.1.3) and consistency proofs (2.1.4), and the verifiers for both.
// Pure: byte arrays in, byte arrays out; no clock, no database.
import { createHash } from "node:crypto";
import { inclusionSides } from "./inclusion.ts";

export type Hash = Uint8Array;

function sha256(...parts: Uint8Array[]): Hash {
  const h = createHash("sha256");
  for (const p of parts) h.update(p);
  return new Uint8Array(h.digest());
}

const LEAF = new Uint8Array([0x00]);
const NODE = new Uint8Array([0x01]);

// The prefixes keep a leaf from ever hashing like an inner node (second-preimage resistance).
export function leafHash(entry: Uint8Array): Hash {
  return sha256(LEAF, entry);
}

export function nodeHash(left: Hash, right: Hash): Hash {
  return sha256(NODE, left, right);
}

/** The largest power of two smaller than n (n >= 2): where RFC 9162 splits a tree. */
function split(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

/** MTH over leaf hashes: the root of the tree of the first leaves.length entries. */
export function rootHash(leaves: readonly Hash[]): Hash {
  return mth(leaves, 0, leaves.length);
}

function mth(leaves: readonly Hash[], from: number, to: number): Hash {
  const n = to - from;
  if (n === 0) return sha256();
  if (n === 1) return leaves[from];
  const k = split(n);
  return nodeHash(mth(leaves, from, from + k), mth(leaves, from + k, to));
}

/** A subtree of the log as the leaves from <= i < to: what a proof entry is the root of. */
export type Range = readonly [from: number, to: number];

/** The subtrees whose roots make PATH(m, D[n]) of section 2.1.3.1, nearest sibling first. */
export function inclusionRanges(m: number, n: number): Range[] {
  if (!(Number.isSafeInteger(m) && Number.isSafeInteger(n) && 0 <= m && m < n)) throw new RangeError("inclusionRanges: need 0 <= m < n");
  const path: Range[] = [];
  let from = 0;
  let to = n;
  let index = m;
  // Walk down from the root, collecting the sibling subtree at each split; reversed at the end
  // because the proof lists the leaf's nearest sibling first.
  while (to - from > 1) {
    const k = split(to - from);
    if (index < k) {
      path.push([from + k, to]);
      to = from + k;
    } else {
      path.push([from, from + k]);
      from += k;
      index -= k;
    }
  }
  return path.reverse();
}

/** The subtrees whose roots make PROOF(m, D[n]) of section 2.1.4.1, in proof order. */
export function consistencyRanges(m: number, n: number): Range[] {
  if (!(Number.isSafeInteger(m) && Number.isSafeInteger(n) && 0 < m && m <= n)) throw new RangeError("consistencyRanges: need 0 < m <= n");
  const path: Range[] = [];
  subproof(m, 0, n, true, path);
  return path;
}

function subproof(m: number, from: number, to: number, whole: boolean, out: Range[]): void {
  const n = to - from;
  if (m === n) {
    // The old tree is this whole subtree; its root is already known to the verifier at the top.
    if (!whole) out.push([from, to]);
    return;
  }
  const k = split(n);
  if (m <= k) {
    subproof(m, from, from + k, whole, out);
    out.push([from + k, to]);
  } else {
    subproof(m - k, from + k, to, false, out);
    out.push([from, from + k]);
  }
}

/** PATH(m, D[n]) over the first n leaf hashes: nearest sibling first. */
export function inclusionProof(leaves: readonly Hash[], m: number, n = leaves.length): Hash[] {
  if (!(n <= leaves.length)) throw new RangeError("inclusionProof: need n <= leaves");
  return inclusionRanges(m, n).map(([from, to]) => mth(leaves, from, to));
}

/** PROOF(m, D[n]): that the tree of size m is a prefix of the tree of size n. */
export function consistencyProof(leaves: readonly Hash[], m: number, n = leaves.length): Hash[] {
  if (!(n <= leaves.length)) throw new RangeError("consistencyProof: need n <= leaves");
  return consistencyRanges(m, n).map(([from, to]) => mth(leaves, from, to));
}

/**
 * The complete subtrees, as (level, index) with leaves index * 2^level .. (index + 1) * 2^level - 1,
 * that [from, to) is made of, left to right, for a range that RFC 9162's splits produce (from a
 * multiple of the largest power of two not above to - from).
 */
export function completeSubtrees(from: number, to: number): { level: number; index: number }[] {
  const out: { level: number; index: number }[] = [];
  let at = from;
  while (at < to) {
    let size = 1;
    while (at % (size * 2) === 0 && at + size * 2 <= to) size *= 2;
    out.push({ level: Math.log2(size), index: at / size });
    at += size;
  }
  return out;
}

/** The root of a range from the roots of its complete subtrees (left to right): RFC 9162's MTH. */
export function foldSubtrees(roots: readonly Hash[]): Hash {
  if (roots.length === 0) return sha256();
  let root = roots[roots.length - 1];
  for (let i = roots.length - 2; i >= 0; i--) root = nodeHash(roots[i], root);
  return root;
}

/** A growing tree as its complete subtrees, left to right: O(log N) hashes, whatever N is. */
export type Frontier = { size: number; hash: Hash }[];

/** Appends a leaf hash to the frontier, merging the equal-sized subtrees it completes. */
export function pushLeaf(frontier: Frontier, leaf: Hash): void {
  let top = { size: 1, hash: leaf };
  while (frontier.length > 0 && frontier[frontier.length - 1].size === top.size) {
    const left = frontier.pop()!;
    top = { size: left.size * 2, hash: nodeHash(left.hash, top.hash) };
  }
  frontier.push(top);
}

function isPowerOfTwo(n: number): boolean {
  while (n > 1 && n % 2 === 0) n /= 2;
  return n === 1;
}

function equal(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i] ^ b[i];
  return diff === 0;
}

/** Section 2.1.3.2: does path prove leaf `hash` at `index` in the tree of `size` with `root`? */
export function verifyInclusion(index: number, size: number, hash: Hash, path: readonly Hash[], root: Hash): boolean {
  // The walk is shared with the WebCrypto verifier that the CLI and the console use.
  const sides = inclusionSides(index, size, path.length);
  if (!sides) return false;
  let r = hash;
  for (let i = 0; i < path.length; i++) r = sides[i] ? nodeHash(path[i], r) : nodeHash(r, path[i]);
  return equal(r, root);
}

/** Section 2.1.4.2: does path prove the tree (first, firstRoot) a prefix of (second, secondRoot)? */
export function verifyConsistency(first: number, second: number, firstRoot: Hash, secondRoot: Hash, path: readonly Hash[]): boolean {
  if (!Number.isSafeInteger(first) || !Number.isSafeInteger(second) || first < 1 || first > second) return false;
  if (first === second) return path.length === 0 && equal(firstRoot, secondRoot);
  if (path.length === 0) return false;
  // A power-of-two old tree is a complete subtree, so the proof leaves out its root.
  const proof = isPowerOfTwo(first) ? [firstRoot, ...path] : [...path];
  let fn = first - 1;
  let sn = second - 1;
  while (fn % 2 === 1) {
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  let fr = proof[0];
  let sr = proof[0];
  for (const c of proof.slice(1)) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      fr = nodeHash(c, fr);
      sr = nodeHash(c, sr);
      if (fn % 2 === 0) {
        while (fn % 2 === 0 && fn !== 0) {
          fn = Math.floor(fn / 2);
          sn = Math.floor(sn / 2);
        }
      }
    } else {
      sr = nodeHash(sr, c);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 && equal(fr, firstRoot) && equal(sr, secondRoot);
}
