// Entry of the single binary (npm run build -> dist/warden): hands the database module and the
// console the files they otherwise read from sql/, node_modules (PGlite, Swagger UI) and dist/console, then runs the
// command line. Bun only.
import pgliteWasm from "@electric-sql/pglite/pglite.wasm" with { type: "file" };
import pgliteInitdbWasm from "@electric-sql/pglite/initdb.wasm" with { type: "file" };
import pgliteData from "@electric-sql/pglite/pglite.data" with { type: "file" };
import swaggerBundle from "swagger-ui-dist/swagger-ui-bundle.js" with { type: "file" };
import swaggerCss from "swagger-ui-dist/swagger-ui.css" with { type: "file" };
import { consoleFiles, sqlFiles } from "./binary-files.ts" with { type: "macro" };
import { useDocsAssetPaths } from "./app/docs-routes.ts";
import { useConsoleSource } from "./console/assets.ts";
import { useEmbeddedFiles } from "./db/index.ts";

// The database's thread is the build's second entry point (scripts/build.ts), named by its path
// from here inside the binary.
const thread = new URL("./db/pglite-thread.ts", import.meta.url).href;
useEmbeddedFiles({ sql: sqlFiles(), pglite: { wasm: pgliteWasm, initdbWasm: pgliteInitdbWasm, data: pgliteData, thread } });

useDocsAssetPaths({ bundle: swaggerBundle, css: swaggerCss });

const consoleBuild = consoleFiles();
if ("index.html" in consoleBuild) {
  useConsoleSource(async () => new Map(Object.entries(consoleBuild).map(([name, base64]) => [name, new Uint8Array(Buffer.from(base64, "base64"))])));
}

await import("./cli/main.ts");
