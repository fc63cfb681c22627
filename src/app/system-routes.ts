import { Elysia, t } from "elysia";
import type { Deps } from "./deps.ts";

export function systemRoutes(deps: Deps) {
  return new Elysia({ name: "system" }).get(
    "/health",
    async () => {
      await deps.db.query("system/ping");
      return { ok: true as const, database: deps.db.kind, version: deps.version };
    },
    {
      detail: { summary: "Liveness and database reachability", tags: ["system"] },
      response: { 200: t.Object({ ok: t.Literal(true), database: t.Union([t.Literal("embedded"), t.Literal("postgres")]), version: t.String() }) },
    },
  );
}
