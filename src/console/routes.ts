// /console: the customer console, a static single-page app over the public JSON API (it has no
// endpoints of its own). index.html answers every page path of ./pages.ts; built files live under
// /console/assets/ with content-hashed names. Any other path under /console is a 404: for a
// browser (which accepts HTML) index.html, whose app shows its "page not found" page with a way
// back; for any other client, and for a missing asset, the usual JSON 404.
import { createHash } from "node:crypto";
import { Elysia } from "elysia";
import type { Logger } from "../log.ts";
import { AppError } from "../http/errors.ts";
import { consoleSource, loadConsoleAssets, type ConsoleAssets, type ConsoleFile, type ConsoleSource } from "./assets.ts";
import { pageOf } from "./pages.ts";

/** What these routes use of the objects the root builds (docs/architecture.md, "The objects the root builds"). */
export interface ConsoleDeps {
  log: Logger;
}

// Only the service's own origin: no inline script or style, no third-party anything.
export const CONSOLE_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

const PAGE_HEADERS = {
  "content-security-policy": CONSOLE_CSP,
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
};

const hidden = { detail: { hide: true } };

const etagOf = (body: Uint8Array) => `"${createHash("sha256").update(body).digest("base64url").slice(0, 22)}"`;

export function consoleRoutes(deps: ConsoleDeps, source: ConsoleSource = consoleSource()) {
  // Read once, on the first request; a missing build is looked for again on the next one.
  let loaded: Promise<ConsoleAssets | undefined> | undefined;
  const assets = async (): Promise<ConsoleAssets> => {
    loaded ??= loadConsoleAssets(source);
    const found = await loaded;
    if (found) return found;
    loaded = undefined;
    deps.log.warn("console_not_built", { hint: "npm run build:console" });
    throw new AppError("not_found", "The console is not built on this server (npm run build:console).");
  };

  const send = (request: Request, file: ConsoleFile, cache: string, etag?: string, status = 200) => {
    const headers: Record<string, string> = { ...PAGE_HEADERS, "content-type": file.type, "cache-control": cache };
    if (etag) {
      headers.etag = etag;
      if (request.headers.get("if-none-match") === etag) return new Response(null, { status: 304, headers });
    }
    let body = file.body;
    if (file.gzip) {
      headers.vary = "accept-encoding";
      if (/\bgzip\b/i.test(request.headers.get("accept-encoding") ?? "")) {
        body = file.gzip;
        headers["content-encoding"] = "gzip";
      }
    }
    return new Response(body as Uint8Array<ArrayBuffer>, { status, headers });
  };

  const page = async (request: Request) => {
    const { index } = await assets();
    // Revalidated on every load (no-cache), so a new build shows at once; the ETag saves the bytes.
    return send(request, index, "no-cache", etagOf(index.body));
  };

  return new Elysia({ name: "console" })
    .get("/console", ({ request }) => page(request), hidden)
    .get(
      "/console/*",
      async ({ request, params }) => {
        const rest = params["*"];
        if (rest.startsWith("assets/")) {
          const file = (await assets()).files.get(rest.slice("assets/".length));
          if (!file) throw new AppError("not_found");
          // The name changes with the content, so a copy never goes stale.
          return send(request, file, "public, max-age=31536000, immutable");
        }
        if (pageOf(rest)) return page(request);
        if (!/\btext\/html\b/i.test(request.headers.get("accept") ?? "")) throw new AppError("not_found");
        // No ETag: a 404 is not worth revalidating, and a 304 would hide its status.
        return send(request, (await assets()).index, "no-cache", undefined, 404);
      },
      hidden,
    );
}
