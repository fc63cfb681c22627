// A tenant's receipt log as C2SP tlog-tiles (c2sp.org/tlog-tiles), the layout standard tlog
// clients read: tile L holds 256 hashes of the tree's level 8L (level 0: the leaves), tile N of a
// level the hashes N*256 ..., a partial tile `.p/W` the first W of them while the level has fewer;
// an entry bundle the entries (here: each receipt's 32-byte chain hash, whose leaf hash is
// SHA-256(0x00 || it)) of the leaves of level-0 tile N. Coordinates and bodies, pure.
import { hexToBytes } from "../crypto/canonical.ts";
import { receiptLeaf } from "./chain.ts";

export const TILE_HEIGHT = 8;
export const TILE_WIDTH = 1 << TILE_HEIGHT;

/** A tile (level 0-63) or an entry bundle, its index in the level, and its width (1-256). */
export interface TileCoordinate {
  level: number | "entries";
  index: number;
  width: number;
}

// tile/<L>/<N>[.p/<W>]: N in 3-digit groups, all but the last prefixed with x; W below 256.
const PATH = /^(entries|0|[1-9][0-9]?)\/((?:x[0-9]{3}\/){0,4}[0-9]{3})(?:\.p\/([1-9][0-9]{0,2}))?$/;

/** The coordinate a path below `tile/` names, or undefined when it is not one in its one canonical spelling. */
export function parseTilePath(path: string): TileCoordinate | undefined {
  const m = PATH.exec(path);
  if (!m) return undefined;
  const level: TileCoordinate["level"] = m[1] === "entries" ? "entries" : Number(m[1]);
  const index = m[2].split("/").reduce((n, group) => n * 1000 + Number(group.replace("x", "")), 0);
  const width = m[3] === undefined ? TILE_WIDTH : Number(m[3]);
  if ((level !== "entries" && level > 63) || (m[3] !== undefined && width >= TILE_WIDTH)) return undefined;
  const tile: TileCoordinate = { level, index, width };
  return tilePath(tile) === path ? tile : undefined;
}

/** The path below `tile/` of a coordinate (x000/ groups never lead, so each tile has one path). */
export function tilePath(tile: TileCoordinate): string {
  let n = tile.index;
  let digits = String(n % 1000).padStart(3, "0");
  while (n >= 1000) {
    n = Math.floor(n / 1000);
    digits = `x${String(n % 1000).padStart(3, "0")}/${digits}`;
  }
  return `${tile.level}/${digits}${tile.width === TILE_WIDTH ? "" : `.p/${tile.width}`}`;
}

/** The tree level and the range of indexes (at that level) whose hashes or entries the tile holds. */
export function tileSpan(tile: TileCoordinate): { treeLevel: number; from: number; to: number } {
  const treeLevel = tile.level === "entries" ? 0 : tile.level * TILE_HEIGHT;
  const from = tile.index * TILE_WIDTH;
  return { treeLevel, from, to: from + tile.width };
}

/** A level-0 tile from its receipts' chain hashes (hex, concatenated): their leaf hashes. */
export function leafTile(chainHashesHex: string): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(chainHashesHex.length / 2);
  for (let i = 0; i < chainHashesHex.length; i += 64) out.set(receiptLeaf(`0x${chainHashesHex.slice(i, i + 64)}`), i / 2);
  return out;
}

/** An entry bundle from its receipts' chain hashes (hex, concatenated): each entry's big-endian uint16 length, then the entry. */
export function entryBundle(chainHashesHex: string): Uint8Array<ArrayBuffer> {
  const entries = chainHashesHex.length / 64;
  const out = new Uint8Array(entries * 34);
  for (let i = 0; i < entries; i++) {
    out[i * 34 + 1] = 32;
    out.set(hexToBytes(chainHashesHex.slice(i * 64, i * 64 + 64)), i * 34 + 2);
  }
  return out;
}
