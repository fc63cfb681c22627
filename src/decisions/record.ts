// Shared by protect and execute: append the receipt, and turn the outcome (or a full quota) into
// a response with RateLimit headers.
import type { Queryable } from "../db/index.ts";
import { AppError, toAppError } from "../http/errors.ts";
import type { Outcome } from "../http/idempotency.ts";
import type { Metrics } from "../observability/metrics.ts";
import type { AnsweredApproval, OpenedApproval, ReceiptAppender } from "../receipts/append.ts";
import type { UsageDecision, UsageLimits } from "../usage/limits.ts";
import { usageSummary, type DecisionReceiptView } from "../receipts/store.ts";
import type { ResultPayload } from "../decide/payload.ts";
import { utcDay } from "../utc-day.ts";
import { rateLimitHeaders } from "./rate-limit.ts";

/** What recording a decision needs: the appender, the usage limits, the usage read for a 429's headers, the clock and the counters. */
export interface Recording {
  db: Queryable;
  receipts: ReceiptAppender;
  usageLimits: UsageLimits;
  metrics: Metrics;
  now: () => Date;
}

export async function recordDecision(
  deps: Recording,
  args: {
    tenantId: string;
    keyId: string;
    requestId: string;
    /** The payload; under usage rules, the one without facts (only its kind is read, for a 429's headers). */
    payload: ResultPayload;
    protectReceiptId?: string;
    approval?: OpenedApproval;
    /** Usage rules apply: decided on its counters' totals, which receipt_append() checks (UsageLimits.append). */
    usage?: Pick<UsageDecision, "at" | "needs" | "make">;
  },
  /** The response body around the stored receipt. */
  shape: (receipt: DecisionReceiptView, answered?: AnsweredApproval) => Record<string, unknown>,
): Promise<Outcome> {
  try {
    const { receipt, quota, at, answered } = args.usage
      ? await deps.usageLimits.append({ tenantId: args.tenantId, keyId: args.keyId, requestId: args.requestId, ...args.usage })
      : await deps.receipts.append(args);
    deps.metrics.decision(receipt.kind, receipt.decision);
    return { status: 200, body: shape(receipt, answered), headers: rateLimitHeaders(quota.limit, quota.used, at) };
  } catch (err) {
    const { error } = toAppError(err);
    if (error.code !== "quota_exceeded") throw err;
    // Only on this path: read where the day stands, so the 429 carries the headers too.
    const now = deps.now();
    const usage = await usageSummary(deps.db, args.tenantId, utcDay(now));
    const kind = args.payload.kind === "execute" ? "execute" : "protect";
    const limit = usage ? (kind === "execute" ? usage.execute_per_day : usage.protect_per_day) : null;
    const used = usage ? (kind === "execute" ? usage.execute_today : usage.protect_today) : 0;
    throw new AppError(error.code, error.message, { fields: error.options.fields, headers: rateLimitHeaders(limit, used, now) });
  }
}
