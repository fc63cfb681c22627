// The WebCrypto inclusion verifier (src/receipts/inclusion.ts), which the CLI's `verify --proof`
// and the console's browser-side check run, against merkle.ts's proofs and synchronous verifier.
import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { leafHashAsync, verifyInclusionAsync } from "../../src/receipts/inclusion.ts";
import { inclusionProof, leafHash, rootHash, verifyInclusion } from "../../src/receipts/merkle.ts";

const entry = (i: number) => new Uint8Array(createHash("sha256").update(`entry ${i}`).digest());
const leaves = Array.from({ length: 21 }, (_, i) => leafHash(entry(i)));

describe("verifyInclusionAsync", () => {
  test("leaf hashes match merkle.ts", async () => {
    for (let i = 0; i < 5; i++) expect(await leafHashAsync(entry(i))).toEqual(leafHash(entry(i)));
  });

  test("accepts every proof of every leaf of trees of 1 to 21 leaves, as merkle.ts does", async () => {
    for (let n = 1; n <= leaves.length; n++) {
      const root = rootHash(leaves.slice(0, n));
      for (let m = 0; m < n; m++) {
        const path = inclusionProof(leaves, m, n);
        expect(await verifyInclusionAsync(m, n, leaves[m], path, root)).toBe(true);
        expect(verifyInclusion(m, n, leaves[m], path, root)).toBe(true);
      }
    }
  });

  // (Another size with the same shape of path is not refused here: the signed checkpoint binds
  // the root to its size.)
  test("refuses a wrong index, size, leaf, path or root, as merkle.ts does", async () => {
    const n = 13;
    const root = rootHash(leaves.slice(0, n));
    const flip = (h: Uint8Array) => Uint8Array.from(h, (b, i) => (i === 0 ? b ^ 1 : b));
    for (let m = 0; m < n; m++) {
      const path = inclusionProof(leaves, m, n);
      const cases: [number, number, Uint8Array, Uint8Array[], Uint8Array][] = [
        [m + 1, n, leaves[m], path, root],
        [m, m, leaves[m], path, root],
        [m, n, flip(leaves[m]), path, root],
        [m, n, leaves[m], path.slice(1), root],
        [m, n, leaves[m], [...path, leaves[0]], root],
        [m, n, leaves[m], path.map((p, i) => (i === 0 ? flip(p) : p)), root],
        [m, n, leaves[m], path, flip(root)],
        [-1, n, leaves[m], path, root],
        [m, Number.NaN, leaves[m], path, root],
      ];
      for (const args of cases) {
        expect(await verifyInclusionAsync(...args)).toBe(false);
        expect(verifyInclusion(...args)).toBe(false);
      }
    }
  });
});
