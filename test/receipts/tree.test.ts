// The pieces the stored tree is read through (src/receipts/merkle.ts): a range of leaves as its
// complete subtrees, their fold back into RFC 9162's root, and the O(log N) frontier that
// `ops receipts check` builds the root with; each against the recursive definition.
import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { completeSubtrees, consistencyRanges, foldSubtrees, type Frontier, inclusionRanges, leafHash, pushLeaf, rootHash } from "../../src/receipts/merkle.ts";

const leaves = Array.from({ length: 70 }, (_, i) => leafHash(createHash("sha256").update(`entry ${i}`).digest()));
const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");

/** The root of [from, to) from the stored subtrees, each stored subtree recomputed from its leaves. */
function storedRoot(from: number, to: number): Uint8Array {
  return foldSubtrees(completeSubtrees(from, to).map(({ level, index }) => {
    const size = 2 ** level;
    return rootHash(leaves.slice(index * size, (index + 1) * size));
  }));
}

describe("the stored tree's reads", () => {
  test("every range a proof or tree head names folds from its complete subtrees to its RFC 9162 root", () => {
    for (let n = 1; n <= leaves.length; n++) {
      const ranges = [[0, n] as const, ...Array.from({ length: n }, (_, m) => inclusionRanges(m, n)).flat(), ...Array.from({ length: n }, (_, m) => consistencyRanges(m + 1, n)).flat()];
      for (const [from, to] of ranges) {
        const parts = completeSubtrees(from, to);
        // O(log N): at most one subtree per level.
        expect(parts.length).toBeLessThanOrEqual(Math.floor(Math.log2(to - from)) + 1);
        expect(hex(storedRoot(from, to))).toBe(hex(rootHash(leaves.slice(from, to))));
      }
    }
  });

  test("an empty tree folds to the hash of nothing", () => {
    expect(completeSubtrees(0, 0)).toEqual([]);
    expect(hex(foldSubtrees([]))).toBe(hex(rootHash([])));
  });

  test("the frontier holds one subtree per set bit of the size and folds to the root", () => {
    const frontier: Frontier = [];
    for (let n = 1; n <= leaves.length; n++) {
      pushLeaf(frontier, leaves[n - 1]);
      expect(frontier.map((s) => s.size).reduce((a, b) => a + b, 0)).toBe(n);
      expect(frontier.length).toBe(n.toString(2).replace(/0/g, "").length);
      expect(hex(foldSubtrees(frontier.map((s) => s.hash)))).toBe(hex(rootHash(leaves.slice(0, n))));
    }
  });
});
