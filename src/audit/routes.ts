// GET /customer/audit: the tenant's audit trail, newest first: the receipts of kind "event" of its
// log and its approvals' steps (./entries.ts), each with the stored receipt itself (as
// GET /customer/receipts/{id} shows it), so that a client can fetch its inclusion proof and check
// it offline like any receipt.
import { Elysia } from "elysia";
import type { Db } from "../db/index.ts";
import type { SessionReader } from "../http/guards.ts";
import { sessionGuard } from "../http/guards.ts";
import { AppError, ErrorResponse } from "../http/errors.ts";
import { decodeCursor, encodeCursor } from "../receipts/cursor.ts";
import { auditEntry } from "./entries.ts";
import { eventFilter } from "./events.ts";
import { AuditList, AuditQuery } from "./model.ts";

/** What these routes use of the objects the root builds (docs/architecture.md, "The objects the root builds"). */
export interface AuditDeps {
  db: Db;
  sessions: SessionReader<{ tenant_id: string; member_id: string }>;
}

const security = [{ bearer: [] as string[] }];

export function auditRoutes(deps: AuditDeps) {
  return new Elysia({ name: "audit", prefix: "/customer/audit" })
    .use(sessionGuard(deps.sessions))
    .guard({ session: true })
    .get(
      "",
      async ({ customer, query }) => {
        const limit = query.limit ?? 50;
        const before = query.cursor === undefined ? null : decodeCursor(query.cursor);
        if (before === undefined) throw new AppError("invalid_request", "query/cursor: not a cursor this service gave out.");
        const filter = query.event === undefined ? { event: null, prefix: null } : eventFilter(query.event);
        if (!filter) throw new AppError("invalid_request", "query/event: an event's name (key.revoked) or a family of them (key.*).");
        const rows = await deps.db.query("audit/list", [customer.tenant_id, before, filter.event, filter.prefix, limit + 1]);
        const events = rows.slice(0, limit).map(auditEntry);
        const next_cursor = rows.length > limit ? encodeCursor(events[events.length - 1]!.seq) : null;
        return { ok: true as const, events, next_cursor };
      },
      {
        query: AuditQuery,
        response: { 200: AuditList, 400: ErrorResponse, 401: ErrorResponse, 403: ErrorResponse },
        detail: {
          summary: "The tenant's audit trail, newest first (cursor pagination; event: one event, or family.*): each event, or step of an approval, with its signed receipt",
          tags: ["audit"],
          security,
        },
      },
    );
}
