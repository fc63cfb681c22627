// Shared by protect and execute: append the receipt, and turn the outcome (or a full quota) into
// a response with RateLimit headers.
import type { Queryable } from "../db/index.ts";
import { AppError, toAppError } from "../http/errors.ts";
import type { Outcome } from "../http/idempotency.ts";
import type { Metrics } from "../observability/metrics.ts";
import type { Appended, AnsweredApproval, OpenedApproval, ReceiptAppender } from "../receipts/append.ts";
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
    const appended = args.usage
      ? await deps.usageLimits.append({ tenantId: args.tenantId, keyId: args.keyId, requestId: args.requestId, ...args.usage })
      : await deps.receipts.append(args);
    return answer(deps, appended, shape);
  } catch (err) {
    throw await withQuotaHeaders(deps, err, args.tenantId, args.payload.kind === "execute" ? "execute" : "protect");
  }
}

/**
 * An ALLOWED protect (no approval, no usage rules) and its execute, stored in one call
 * (ReceiptAppender.appendWithExecute()): the protect's answer, then the execute's or its refusal
 * (an error, as recordDecision() would throw it). A refused protect throws.
 */
export async function recordWithExecute(
  deps: Recording,
  args: { tenantId: string; keyId: string; requestId: string; payload: ResultPayload; execute: ResultPayload },
  shapes: { protect: (receipt: DecisionReceiptView) => Record<string, unknown>; execute: (receipt: DecisionReceiptView) => Record<string, unknown> },
): Promise<{ protect: Outcome; execute: Outcome | Error }> {
  let both: [Appended, Appended | Error];
  try {
    both = await deps.receipts.appendWithExecute(args);
  } catch (err) {
    throw await withQuotaHeaders(deps, err, args.tenantId, "protect");
  }
  const [asked, done] = both;
  return {
    protect: answer(deps, asked, shapes.protect),
    execute: done instanceof Error ? ((await withQuotaHeaders(deps, done, args.tenantId, "execute")) as Error) : answer(deps, done, shapes.execute),
  };
}

function answer(deps: Recording, appended: Appended, shape: (receipt: DecisionReceiptView, answered?: AnsweredApproval) => Record<string, unknown>): Outcome {
  const { receipt, quota, at, answered } = appended;
  deps.metrics.decision(receipt.kind, receipt.decision);
  return { status: 200, body: shape(receipt, answered), headers: rateLimitHeaders(quota.limit, quota.used, at) };
}

/** A refusal as answered: a full daily quota with the RateLimit headers (read only on this path); anything else as it came. */
async function withQuotaHeaders(deps: Recording, err: unknown, tenantId: string, kind: "protect" | "execute"): Promise<unknown> {
  const { error } = toAppError(err);
  if (error.code !== "quota_exceeded") return err;
  const now = deps.now();
  const usage = await usageSummary(deps.db, tenantId, utcDay(now));
  const limit = usage ? (kind === "execute" ? usage.execute_per_day : usage.protect_per_day) : null;
  const used = usage ? (kind === "execute" ? usage.execute_today : usage.protect_today) : 0;
  return new AppError(error.code, error.message, { fields: error.options.fields, headers: rateLimitHeaders(limit, used, now) });
}
