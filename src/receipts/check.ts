// `warden ops receipts check TENANT`: re-walks a tenant's whole log from the database and
// recomputes everything the receipts claim (canonical payload, content_hash, decision, chain,
// seq continuity, signatures against the service's JWKS, the head), decisions and audit events
// alike. Any break is reported.
import type { Queryable } from "../db/index.ts";
import { bytesToHex, canonicalJson, sha256Hex } from "../crypto/canonical.ts";
import { chainHash, receiptLeaf } from "./chain.ts";
import { receiptClaims } from "./claims.ts";
import { foldSubtrees, pushLeaf, type Frontier } from "./merkle.ts";
import { rangeRoots } from "./tree.ts";
import { signedBeforeCompromise, verifyCanonical } from "../crypto/signature.ts";
import { publishedKeys } from "./signer.ts";
import { logHead, receiptRange } from "./store.ts";

const PAGE = 1000;
const MAX_REPORTED = 100;

export interface LogCheck {
  ok: boolean;
  tenant_id: string;
  receipts: number;
  root_hash: string;
  problems: { seq: number; receipt_id?: string; problem: string }[];
}

/** The kinds the head counts apart from storage (receipt_append()): audit events, approval votes and outcomes. */
const UNSTORED: ReadonlySet<string> = new Set(["event", "vote", "approval"]);

/**
 * undefined when there is no such tenant. The log is compared with a head read after the walk,
 * and the walk goes on while that head is ahead of it, so receipts that a running service appends
 * meanwhile are checked, not mistaken for a break. onProgress hears of each page (receipts
 * checked, receipts in the log).
 */
export async function checkReceiptLog(db: Queryable, tenantId: string, onProgress?: (checked: number, total: number) => void): Promise<LogCheck | undefined> {
  const first = await logHead(db, tenantId);
  if (!first) return undefined;
  let head: { tree_size: number; head_hash: string | null; event_count: number } = first;
  const jwks = await publishedKeys(db);
  const problems: LogCheck["problems"] = [];
  const report = (seq: number, problem: string, receipt_id?: string) => {
    if (problems.length < MAX_REPORTED) problems.push({ seq, receipt_id, problem });
  };
  // The root is built as the pages go by: memory stays O(log N) whatever the log's size.
  const frontier: Frontier = [];
  let expected = 0;
  let events = 0;
  let prev: string | null = null;
  for (;;) {
    const rows = await receiptRange(db, tenantId, expected, Number.MAX_SAFE_INTEGER, PAGE);
    if (rows.length === 0) {
      const later = (await logHead(db, tenantId)) ?? head;
      const grew = later.tree_size > head.tree_size;
      head = later;
      if (grew && head.tree_size > expected) continue; // appended while we walked
      break;
    }
    for (const row of rows) {
      const id = row.receipt_id;
      if (row.seq !== expected) report(expected, `seq ${row.seq} follows ${expected - 1}: a gap`, id);
      let payload: Record<string, unknown> | undefined;
      try {
        payload = JSON.parse(row.payload);
      } catch {
        report(row.seq, "payload is not JSON", id);
      }
      if (payload && canonicalJson(payload) !== row.payload) report(row.seq, "payload is not in canonical (JCS) form", id);
      if ((await sha256Hex(row.payload)) !== row.content_hash) report(row.seq, "content_hash does not match the payload", id);
      if (payload && ((payload.decision ?? null) !== row.decision || payload.kind !== row.kind)) report(row.seq, "decision or kind differs from the payload", id);
      if (row.prev_hash !== prev) report(row.seq, "prev_hash is not the previous chain_hash", id);
      const claims = receiptClaims({ ...row, tenant_id: tenantId });
      if ((await chainHash({ ...claims, prev, seq: row.seq })) !== row.chain_hash) report(row.seq, "chain_hash does not match", id);
      const signed = await verifyCanonical(row.signature, jwks);
      if (!signed.valid || canonicalJson(signed.payload) !== canonicalJson(claims)) report(row.seq, "signature does not verify", id);
      else if (!signedBeforeCompromise(signed.compromised_since, row.timestamp)) report(row.seq, `signed by key ${signed.kid}, compromised at or before this receipt's time`, id);
      if (UNSTORED.has(row.kind)) events++;
      pushLeaf(frontier, receiptLeaf(row.chain_hash));
      prev = row.chain_hash;
      expected = row.seq + 1;
    }
    onProgress?.(expected, Math.max(head.tree_size, expected));
  }
  if (expected !== head.tree_size || prev !== head.head_hash) report(expected, `the head says ${head.tree_size} receipts ending in ${head.head_hash}; the log has ${expected} ending in ${prev}`);
  // Storage quotas count the decisions: the head's count of the others must be the log's.
  else if (events !== head.event_count) report(expected, `the head counts ${head.event_count} receipts that take no storage (events, votes, outcomes); the log has ${events}`);
  const root_hash = bytesToHex(foldSubtrees(frontier.map((s) => s.hash)));
  // The stored tree that checkpoints and proofs are read from must agree with the chain.
  const stored = await rangeRoots(db, tenantId, [[0, expected]]).then(([root]) => bytesToHex(root), () => "missing nodes");
  if (stored !== root_hash) report(expected, `the stored Merkle tree's root (${stored}) is not the chain's (${root_hash})`);
  return { ok: problems.length === 0, tenant_id: tenantId, receipts: expected, root_hash, problems };
}
