// Shortcuts for tests of keys, policies, decisions and receipts: headers, calls and plan changes.
import { call, testService, type Reply } from "./service.ts";
import type { Service } from "../../src/app/service.ts";
import { planSetAsApproved, testQuery } from "./sql.ts";

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
export const apiKey = (secret: string) => ({ "x-api-key": secret });

export const SMALL_PAYMENT = { action: "payment.send", resource: "vendor/acme", amount: 250, currency: "USD" };
export const LARGE_PAYMENT = { action: "payment.send", resource: "vendor/acme", amount: 5000, currency: "USD" };

export function protect(secret: string, input: unknown = SMALL_PAYMENT, opts: { headers?: Record<string, string>; service?: Service } = {}): Promise<Reply> {
  return call("POST", "/v1/protect", { json: input, headers: { ...apiKey(secret), ...opts.headers }, service: opts.service });
}

export function execute(secret: string, receiptId: string, opts: { headers?: Record<string, string>; service?: Service } = {}): Promise<Reply> {
  return call("POST", "/v1/execute", { json: { receipt_id: receiptId }, headers: { ...apiKey(secret), ...opts.headers }, service: opts.service });
}

/**
 * The tenant's log as it stands: `size` is the next receipt's seq, `last` the chain_hash its
 * prev_hash names (null when empty). A new tenant's log holds one receipt: its signup's
 * key.created event.
 */
export async function logHead(token: string, service?: Service): Promise<{ size: number; last: string | null }> {
  const [newest] = (await call("GET", "/customer/receipts?limit=1", { headers: bearer(token), service })).body.receipts as { seq: number; chain_hash: string }[];
  return newest ? { size: newest.seq + 1, last: newest.chain_hash } : { size: 0, last: null };
}

/** Moves a tenant up to a plan as an approved upgrade would. */
export async function setPlan(tenantId: string, plan: "pro" | "enterprise"): Promise<void> {
  const { db } = await testService();
  const rows = await planSetAsApproved(db, tenantId, plan);
  if (rows.length !== 1) throw new Error(`could not move ${tenantId} to ${plan}`);
}

/** Sets today's (UTC) protect and execute counters of a tenant. */
export async function setUsage(tenantId: string, protectCount: number, executeCount: number, day = new Date().toISOString().slice(0, 10)): Promise<void> {
  const { db } = await testService();
  await testQuery(db, "usage_set", [tenantId, day, protectCount, executeCount]);
}

/** Runs fn with at most `limit` calls in flight. */
export async function pool<T>(count: number, limit: number, fn: (i: number) => Promise<T>): Promise<T[]> {
  const results: T[] = new Array(count);
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      results[i] = await fn(i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, count) }, worker));
  return results;
}
