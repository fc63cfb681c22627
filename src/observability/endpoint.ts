// The plain-HTTP listener on METRICS_ADDR: /metrics for Prometheus, /livez and /readyz for an
// orchestrator. It carries no customer data, so it needs no TLS; keep it on a private address.
import { AppError, errorBody, toAppError } from "../http/errors.ts";
import { newId } from "../ids.ts";
import type { Metrics } from "./metrics.ts";
import type { Probes } from "./probes.ts";

export function metricsEndpoint(metrics: Metrics, probes: Probes): (request: Request) => Promise<Response> {
  return async (request) => {
    try {
      if (request.method !== "GET" && request.method !== "HEAD") throw new AppError("not_found");
      switch (new URL(request.url).pathname) {
        case "/metrics": {
          const { contentType, text } = await metrics.scrape();
          return new Response(text, { headers: { "content-type": contentType, "cache-control": "no-store" } });
        }
        case "/livez":
          return Response.json({ ok: true });
        case "/readyz":
          await probes.ready();
          return Response.json({ ok: true });
        default:
          throw new AppError("not_found");
      }
    } catch (err) {
      const { error } = toAppError(err);
      return Response.json(errorBody(error, newId("req_")), { status: error.status, headers: { ...error.options.headers, "cache-control": "no-store" } });
    }
  };
}
