// Receipt verification material: the public keys that sign receipts and checkpoints.
import { Elysia, t } from "elysia";
import type { Deps } from "../http/deps.ts";

export function receiptsRoutes(deps: Deps) {
  return new Elysia({ name: "receipts" }).get(
    "/.well-known/jwks.json",
    async ({ set }) => {
      set.headers["cache-control"] = "public, max-age=300";
      const { keys } = await deps.signer.jwks();
      return { ok: true as const, keys: keys as { kid: string; kty: "OKP"; crv: "Ed25519"; x: string }[] };
    },
    {
      response: { 200: t.Object({ ok: t.Literal(true), keys: t.Array(t.Object({ kid: t.String(), kty: t.Literal("OKP"), crv: t.Literal("Ed25519"), x: t.String() })) }) },
      detail: { summary: "Public keys (Ed25519) that sign receipts, active and retired", tags: ["receipts"] },
    },
  );
}
