// GET /openapi.json, the document src/app/openapi.ts builds, and GET /docs: Swagger UI over it,
// served entirely from this origin. The page runs in the same origin as the console, whose session token a foreign script could read, so its scripts are
// a pinned copy from npm (swagger-ui-dist, exact version in package.json) served here, never a CDN,
// and a Content-Security-Policy lets the page load nothing from elsewhere.
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { Elysia } from "elysia";
import { OPENAPI_PATH } from "./openapi.ts";

/** Where the two Swagger UI files are read from: node_modules, or the single binary's embedded copies. */
export interface DocsAssetPaths {
  bundle: string;
  css: string;
}

let assetPaths: DocsAssetPaths | undefined;

/** The single binary hands in its embedded copies (src/binary.ts); call before the app is built. */
export function useDocsAssetPaths(paths: DocsAssetPaths): void {
  assetPaths = paths;
}

function resolvedPaths(): DocsAssetPaths {
  if (assetPaths) return assetPaths;
  const require = createRequire(import.meta.url);
  return { bundle: require.resolve("swagger-ui-dist/swagger-ui-bundle.js"), css: require.resolve("swagger-ui-dist/swagger-ui.css") };
}

export const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  // Swagger UI sets style attributes on its elements.
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>warden API</title>
<link rel="stylesheet" href="/docs/assets/swagger-ui.css">
</head>
<body>
<div id="swagger-ui"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/assets/init.js"></script>
</body>
</html>
`;

// validatorUrl null: Swagger UI would otherwise send the document to validator.swagger.io.
const INIT = `window.ui = SwaggerUIBundle({ url: "/openapi.json", dom_id: "#swagger-ui", deepLinking: true, validatorUrl: null });\n`;

const HTML = "text/html; charset=utf-8";
const JS = "text/javascript; charset=utf-8";
const CSS = "text/css; charset=utf-8";

/** openApiJson: the document's bytes, known once every route is registered. */
export function docsRoutes(openApiJson: () => string) {
  // Read once, on first request: most processes never serve /docs.
  let files: Promise<{ bundle: Blob; css: Blob }> | undefined;
  const load = () =>
    (files ??= (async () => {
      const paths = resolvedPaths();
      const [bundle, css] = await Promise.all([readFile(paths.bundle), readFile(paths.css)]);
      return { bundle: new Blob([bundle]), css: new Blob([css]) };
    })());
  const send = (body: BodyInit, type: string, cache: string) =>
    new Response(body, { headers: { "content-type": type, "content-security-policy": DOCS_CSP, "cache-control": cache } });
  const asset = "public, max-age=3600";
  const hide = { detail: { hide: true } };
  return new Elysia({ name: "docs" })
    .get(OPENAPI_PATH, () => new Response(openApiJson(), { headers: { "content-type": "application/json; charset=utf-8" } }), hide)
    .get("/docs", () => send(PAGE, HTML, "no-store"), hide)
    .get("/docs/assets/init.js", () => send(INIT, JS, asset), hide)
    .get("/docs/assets/swagger-ui-bundle.js", async () => send((await load()).bundle, JS, asset), hide)
    .get("/docs/assets/swagger-ui.css", async () => send((await load()).css, CSS, asset), hide);
}
