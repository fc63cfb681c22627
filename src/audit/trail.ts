// Writing the audit trail: a change and the signed receipts of its events commit in one
// transaction, or neither does (docs/api.md, "The audit trail"):
//
//   await deps.audit.tx(async (q, record) => {
//     const row = await q.one("keys/revoke", [...]);
//     await record({ ...byMember(customer, request), event: "key.revoked", target: { key_id } });
//   });
//
// The service signs (it holds the key); receipt_event_append() in the database links the events
// into their tenants' chains. Events count toward no quota and not toward receipts_stored.
import type { Db, Queryable, QueryRow } from "../db/index.ts";
import { signReceipt } from "../receipts/sign.ts";
import type { EventPayload } from "../receipts/event.ts";
import type { ReceiptSigner } from "../receipts/signer.ts";
import type { AuditEvent } from "./events.ts";

/** Appends events in the caller's transaction; answers each event's receipt and link, in order. */
export type RecordEvents = (...events: AuditEvent[]) => Promise<QueryRow<"audit/append">[]>;

/** One event as receipt_event_append() takes it. */
interface EventItem {
  receipt_id: string;
  tenant_id: string;
  request_id: string;
  timestamp: string;
  payload: string;
  content_hash: string;
  signature: string;
}

export class AuditTrail {
  constructor(
    private readonly db: Db,
    private readonly signer: ReceiptSigner,
    private readonly now: () => Date,
  ) {}

  /**
   * Runs fn in one transaction with a `record` of its events: fn's changes and the events commit
   * together, and an event that cannot be written (signed, linked, stored) rolls the change back.
   * Inside fn use only q (on the embedded database another query would wait for this transaction).
   */
  async tx<T>(fn: (q: Queryable, record: RecordEvents) => Promise<T>): Promise<T> {
    // A stale signing key is reloaded here, outside the transaction: inside it the signer reads nothing.
    await this.signer.ready();
    return this.db.tx((q) => fn(q, (...events) => this.append(q, events)));
  }

  private async append(q: Queryable, events: AuditEvent[]): Promise<QueryRow<"audit/append">[]> {
    if (events.length === 0) return [];
    const timestamp = this.now().toISOString();
    const items = await Promise.all(events.map((e) => this.signed(e, timestamp)));
    return q.query("audit/append", [items]);
  }

  private async signed(e: AuditEvent, timestamp: string): Promise<EventItem> {
    const payload: EventPayload = { v: 2, kind: "event", event: e.event, actor: e.actor, target: e.target, at: e.at ?? timestamp };
    const { receipt_id, tenant_id, request_id, payload: text, content_hash, signature } = await signReceipt((claims) => this.signer.signHeld(claims), {
      tenantId: e.tenantId,
      keyId: null,
      kind: "event",
      requestId: e.requestId,
      timestamp,
      payload,
      protectReceiptId: null,
    });
    return { receipt_id, tenant_id, request_id, timestamp, payload: text, content_hash, signature };
  }

}
