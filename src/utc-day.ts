// The UTC calendar day of an instant: the day usage_daily counts and the quotas reset on
// (docs/api.md, the introduction). Below both the decisions that count and the plans' dashboard.

/** The UTC calendar day of an instant, as usage_daily keys it. */
export function utcDay(now: Date): string {
  return now.toISOString().slice(0, 10);
}
