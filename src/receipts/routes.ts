// Receipt verification material (the public keys that sign receipts and checkpoints) and the
// customer's receipt log: /customer/receipts, one receipt, checkpoint, proofs, export, and the
// log's C2SP tiles under /customer/log/.
import { Elysia, t } from "elysia";
import type { Config } from "../config.ts";
import type { Db } from "../db/index.ts";
import type { SessionReader } from "../http/guards.ts";
import type { ReceiptSigner } from "./signer.ts";
import type { TenantTurns } from "./turns.ts";
import { sessionGuard } from "../http/guards.ts";
import { AppError, ErrorResponse } from "../http/errors.ts";
import { requireFeature } from "../features/gate.ts";
import { logConsistency, receiptProof, signedCheckpoint } from "./checkpoint.ts";
import { decodeCursor, encodeCursor } from "./cursor.ts";
import { Checkpoint, ConsistencyProof, ConsistencyQuery, InclusionProof, ListQuery, OneReceipt, ProofQuery, PublishedKey, ReceiptList, ReceiptParams } from "./model.ts";
import { getReceiptRow, listReceiptRows, logHead, logLeaf, receiptRange, toReceipt } from "./store.ts";
import { parseTilePath } from "./tiles.ts";
import { tileBody } from "./tree.ts";

/** What these routes use of the objects the root builds (docs/architecture.md, "The objects the root builds"). */
export interface ReceiptsDeps {
  config: Config;
  db: Db;
  logReads: TenantTurns;
  now: () => Date;
  sessions: SessionReader<{ tenant_id: string; member_id: string }>;
  signer: ReceiptSigner;
}

const security = [{ bearer: [] as string[] }];
const EXPORT_PAGE = 500;

export function receiptsRoutes(deps: ReceiptsDeps) {
  return new Elysia({ name: "receipts" })
    .get(
      "/.well-known/jwks.json",
      async ({ set }) => {
        set.headers["cache-control"] = "public, max-age=300";
        const { keys } = await deps.signer.jwks();
        return { ok: true as const, keys: keys as PublishedKey[] };
      },
      {
        response: { 200: t.Object({ ok: t.Literal(true), keys: t.Array(PublishedKey) }), 503: ErrorResponse },
        detail: { summary: "Public keys (Ed25519) that sign receipts, active and retired; a revoked key carries compromised_since", tags: ["receipts"], security: [] },
      },
    )
    .use(receiptLogRoutes(deps))
    .use(receiptTileRoutes(deps));
}

/** A path's percent-escapes decoded; a malformed escape gives a string no tile path matches. */
function decodedPath(path: string): string {
  try {
    return decodeURIComponent(path);
  } catch {
    return "";
  }
}

function receiptLogRoutes(deps: ReceiptsDeps) {
  const notFound = () => new AppError("not_found", "No such receipt.");
  return (
    new Elysia({ name: "receipt-log", prefix: "/customer/receipts" })
      .use(sessionGuard(deps.sessions))
      .guard({ session: true })
      .get(
        "",
        async ({ customer, query }) => {
          const limit = query.limit ?? 50;
          const before = query.cursor === undefined ? null : decodeCursor(query.cursor);
          if (before === undefined) throw new AppError("invalid_request", "query/cursor: not a cursor this service gave out.");
          const rows = await listReceiptRows(deps.db, customer.tenant_id, before, limit + 1);
          const page = rows.slice(0, limit);
          const next_cursor = rows.length > limit ? encodeCursor(page[page.length - 1].seq) : null;
          return { ok: true as const, receipts: page.map(toReceipt), next_cursor };
        },
        {
          query: ListQuery,
          response: { 200: ReceiptList, 400: ErrorResponse, 401: ErrorResponse },
          detail: { summary: "The tenant's receipts, newest first (cursor pagination)", tags: ["receipts"], security },
        },
      )
      // Static segments before /:receipt_id (the router prefers them anyway; this keeps it obvious).
      .get("/checkpoint", ({ customer }) => deps.logReads.run(customer.tenant_id, () => signedCheckpoint(deps, customer.tenant_id)), {
        response: { 200: Checkpoint, 401: ErrorResponse },
        detail: { summary: "Signed tree head of the receipt log (RFC 9162)", tags: ["receipts"], security },
      })
      .get("/consistency", ({ customer, query }) => deps.logReads.run(customer.tenant_id, () => logConsistency(deps.db, customer.tenant_id, query.from, query.to)), {
        query: ConsistencyQuery,
        response: { 200: ConsistencyProof, 400: ErrorResponse, 401: ErrorResponse },
        detail: { summary: "Consistency proof between two tree sizes (RFC 9162 section 2.1.4)", tags: ["receipts"], security },
      })
      .get(
        "/export",
        async ({ customer }) => {
          await requireFeature(deps.db, customer.tenant_id, "receipt_export");
          const tenantId = customer.tenant_id;
          // The log as it stands now; receipts appended during the download are not included.
          const end = (await logHead(deps.db, tenantId))?.tree_size ?? 0;
          const encoder = new TextEncoder();
          let next = 0;
          const body = new ReadableStream<Uint8Array>({
            async pull(controller) {
              if (next >= end) return controller.close();
              const rows = await receiptRange(deps.db, tenantId, next, end, EXPORT_PAGE);
              if (rows.length === 0) return controller.close();
              next = rows[rows.length - 1].seq + 1;
              controller.enqueue(encoder.encode(rows.map((r) => JSON.stringify(toReceipt(r)) + "\n").join("")));
            },
          });
          return new Response(body, {
            headers: { "content-type": "application/x-ndjson", "content-disposition": `attachment; filename="receipts-${tenantId}.ndjson"` },
          });
        },
        {
          response: { 401: ErrorResponse, 403: ErrorResponse },
          detail: {
            summary: "Every receipt as NDJSON, oldest first (feature receipt_export)",
            tags: ["receipts"],
            security,
            responses: { 200: { description: "One receipt (the shape of GET /customer/receipts/{receipt_id}) per line", content: { "application/x-ndjson": { schema: { type: "string" } } } } },
          },
        },
      )
      .get(
        "/:receipt_id",
        async ({ customer, params }) => {
          const row = await getReceiptRow(deps.db, customer.tenant_id, params.receipt_id);
          if (!row) throw notFound();
          return { ok: true as const, receipt: toReceipt(row) };
        },
        {
          params: ReceiptParams,
          response: { 200: OneReceipt, 401: ErrorResponse, 404: ErrorResponse },
          detail: { summary: "One receipt", tags: ["receipts"], security },
        },
      )
      .get(
        "/:receipt_id/proof",
        async ({ customer, params, query }) => {
          return deps.logReads.run(customer.tenant_id, async () => {
            const leaf = await logLeaf(deps.db, customer.tenant_id, params.receipt_id);
            if (!leaf) throw notFound();
            return receiptProof(deps.db, customer.tenant_id, leaf, query.tree_size);
          });
        },
        {
          params: ReceiptParams,
          query: ProofQuery,
          response: { 200: InclusionProof, 400: ErrorResponse, 401: ErrorResponse, 404: ErrorResponse },
          detail: { summary: "Inclusion proof of a receipt (RFC 9162 section 2.1.3), for tree_size (default: current)", tags: ["receipts"], security },
        },
      )
  );
}

/**
 * The log as C2SP tlog-tiles (docs/api.md) under its own prefix, /customer/log/: a tile's path is
 * one no other route's template can match, which generated clients (openapi-typescript) require.
 */
function receiptTileRoutes(deps: ReceiptsDeps) {
  return (
    new Elysia({ name: "receipt-tiles", prefix: "/customer/log" })
      .use(sessionGuard(deps.sessions))
      .guard({ session: true })
      // The document names the wildcard {tile} (src/app/openapi.ts): generated clients send its
      // slashes percent-encoded, tlog clients as they are; both name the same tile.
      .get(
        "/tile/*",
        ({ customer, params }) => {
          const tile = parseTilePath(decodedPath(params["*"]));
          if (!tile) throw new AppError("invalid_request", "path: not a tile of c2sp.org/tlog-tiles: tile/<L>/<N>[.p/<W>] or tile/entries/<N>[.p/<W>].");
          return deps.logReads.run(customer.tenant_id, async () => {
            const body = await tileBody(deps.db, customer.tenant_id, tile);
            if (!body) throw new AppError("not_found", "No such tile: the log does not hold all of it (yet).");
            // A tile's bytes never change once the log holds it, whatever the log's later size.
            return new Response(body, { headers: { "content-type": "application/octet-stream", "cache-control": "private, max-age=31536000, immutable" } });
          });
        },
        {
          params: t.Object({ "*": t.String({ description: "<L>/<N>[.p/<W>] or entries/<N>[.p/<W>], as c2sp.org/tlog-tiles spells them (the slashes as they are, or as %2F)" }) }),
          response: { 400: ErrorResponse, 401: ErrorResponse, 404: ErrorResponse },
          detail: {
            summary: "A tile of the log's Merkle tree, or an entry bundle, in the C2SP tlog-tiles layout (the log's prefix: /customer/log/)",
            tags: ["receipts"],
            security,
            responses: {
              200: {
                description: "Tile: the 32-byte hashes of tree level 8L, indexes N*256 to N*256+W-1 (level 0: leaf hashes). Entry bundle: each receipt's chain hash (32 bytes) after its length as a big-endian uint16.",
                content: { "application/octet-stream": { schema: { type: "string", format: "binary" } } },
              },
            },
          },
        },
      )
  );
}
