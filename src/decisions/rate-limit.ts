// RateLimit-Limit / -Remaining / -Reset on protect and execute responses (docs/api.md, the introduction):
// the daily quota the endpoint counts against, and the seconds until it resets at 00:00 UTC.
// Unlimited plans get no RateLimit headers: there is no limit to announce.

export function secondsToUtcMidnight(now: Date): number {
  const midnight = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
  return Math.max(1, Math.ceil((midnight - now.getTime()) / 1000));
}

export function rateLimitHeaders(limit: number | null, used: number, now: Date): Record<string, string> {
  if (limit === null) return {};
  return {
    "ratelimit-limit": String(limit),
    "ratelimit-remaining": String(Math.max(0, limit - used)),
    "ratelimit-reset": String(secondsToUtcMidnight(now)),
  };
}
