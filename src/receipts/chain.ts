// The hash chain of a tenant's receipt log (docs/api.md, Receipts and the receipt log). The database computes the same
// value when it appends (receipt_chain_hash() in sql/schema); this copy serves checks
// made outside it: `warden ops receipts check`, `warden verify --proof`, tests.
import { canonicalJson, hexToBytes, sha256Hex } from "../crypto/canonical.ts";
import { receiptClaims, type ReceiptClaims } from "./claims.ts";
import { leafHash } from "./merkle.ts";

export type ChainLink = Omit<ReceiptClaims, "v"> & { prev: string | null; seq: number };

/** "0x" + hex SHA-256 of the JCS form of the receipt claims plus prev and seq. */
export function chainHash(link: ChainLink): Promise<string> {
  return sha256Hex(canonicalJson({ ...receiptClaims(link), prev: link.prev, seq: link.seq }));
}

const HASH = /^0x[0-9a-f]{64}$/;

export function isHash(value: unknown): value is string {
  return typeof value === "string" && HASH.test(value);
}

/** The Merkle leaf of a receipt: SHA-256(0x00 ‖ the 32 bytes its chain_hash encodes). */
export function receiptLeaf(chain_hash: string): Uint8Array {
  if (!isHash(chain_hash)) throw new TypeError("receiptLeaf: chain_hash must be 0x + 64 hex");
  return leafHash(hexToBytes(chain_hash));
}
