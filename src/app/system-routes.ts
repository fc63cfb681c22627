import { Elysia, t } from "elysia";
import { ErrorResponse } from "../http/errors.ts";
import type { Deps } from "./deps.ts";
import { faviconIco } from "./favicon.ts";

const Ok = t.Object({ ok: t.Literal(true) });

// Not API, so not in the OpenAPI document (like /console and /docs).
const hidden = { detail: { hide: true } };

export function systemRoutes(deps: Deps) {
  const favicon = faviconIco();
  return new Elysia({ name: "system" })
    // A person who types the bare address lands on the console. 302, not 301 or 308: a browser
    // keeps a permanent redirect for good, and / may answer something else one day.
    .get("/", () => new Response(null, { status: 302, headers: { location: "/console" } }), hidden)
    .get("/favicon.ico", () => new Response(favicon, { headers: { "content-type": "image/x-icon", "cache-control": "public, max-age=86400" } }), hidden)
    .get(
      "/health",
      async () => {
        await deps.db.query("system/ping");
        return { ok: true as const, database: deps.db.kind, version: deps.version };
      },
      {
        detail: { summary: "Liveness and database reachability", tags: ["system"], security: [] },
        response: { 200: t.Object({ ok: t.Literal(true), database: t.Union([t.Literal("embedded"), t.Literal("postgres")]), version: t.String() }), 503: ErrorResponse },
      },
    )
    // Also on the METRICS_ADDR listener (src/observability/endpoint.ts), for probes that cannot speak TLS.
    .get("/livez", () => ({ ok: true as const }), {
      detail: { summary: "Liveness: 200 while the process runs", tags: ["system"], security: [] },
      response: { 200: Ok },
    })
    .get(
      "/readyz",
      async () => {
        await deps.probes.ready();
        return { ok: true as const };
      },
      {
        detail: { summary: "Readiness: 200 when the database answers and no graceful stop has begun, else 503 unavailable", tags: ["system"], security: [] },
        response: { 200: Ok, 503: ErrorResponse },
      },
    );
}
