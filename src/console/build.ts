// `npm run build:console`: bundles the console (index.html and everything it loads) with Bun's
// bundler into dist/console/: index.html plus content-hashed JS and CSS. `npm start` and
// `npm test` run it first (prestart, pretest); the server only reads its output (./assets.ts).
import { mkdir, mkdtemp, readdir, rename, rm, stat, writeFile } from "node:fs/promises";
import { basename, join } from "node:path";
import type { BunPlugin } from "bun";
import { CONSOLE_DIST } from "./assets.ts";

const ENTRY = join(import.meta.dir, "index.html");
// Files of earlier builds stay this long, so a server that read an older index.html still finds them.
const KEEP_OLD_MS = 60 * 60 * 1000;

// The receipt checks the console shares with the CLI hash with WebCrypto; the synchronous Merkle
// helpers beside them import node:crypto, which must not pull a 160 KB polyfill into the page.
// Reaching them in the browser would be a bug, so the stand-in throws. The SDK's bundle
// (scripts/build-sdk.ts) uses it too.
export const noNodeCrypto: BunPlugin = {
  name: "no-node-crypto",
  setup(build) {
    build.onResolve({ filter: /^(node:)?crypto$/ }, () => ({ path: "node-crypto", namespace: "console-stub" }));
    build.onLoad({ filter: /.*/, namespace: "console-stub" }, () => ({
      contents: "export function createHash() { throw new Error('node:crypto is not available in the browser'); }",
      loader: "js",
    }));
  },
};

// CodeMirror's style-mod would write its styles into a <style> element, which the CSP refuses:
// every import of it but the stand-in's own gets ./app/adopted-styles.ts, which adopts a
// constructed style sheet instead (docs/decisions.md).
const ADOPTED_STYLES = join(import.meta.dir, "app", "adopted-styles.ts");
export const adoptedStyles: BunPlugin = {
  name: "adopted-styles",
  setup(build) {
    build.onResolve({ filter: /^style-mod$/ }, (args) => (args.importer === ADOPTED_STYLES ? undefined : { path: ADOPTED_STYLES }));
  },
};

export async function buildConsole(outDir = CONSOLE_DIST): Promise<{ files: string[]; bytes: number }> {
  await mkdir(outDir, { recursive: true });
  // Build beside the target, then move file by file: a concurrent build or a running server
  // never sees a half-written file.
  const staging = await mkdtemp(join(outDir, ".build-"));
  try {
    const result = await Bun.build({
      entrypoints: [ENTRY],
      outdir: staging,
      target: "browser",
      minify: true,
      sourcemap: "none",
      publicPath: "/console/assets/",
      naming: { entry: "[name]-[hash].[ext]", chunk: "[name]-[hash].[ext]", asset: "[name]-[hash].[ext]" },
      define: { "process.env.NODE_ENV": JSON.stringify("production") },
      plugins: [noNodeCrypto, adoptedStyles],
      // The policy page's code editor is a chunk of its own, loaded by that page only.
      splitting: true,
    });
    if (!result.success) throw new AggregateError(result.logs, "console build failed");
    const built = (await readdir(staging)).filter((name) => !name.startsWith("."));
    const html = built.find((name) => name.endsWith(".html"));
    if (!html) throw new Error("console build produced no HTML");
    let bytes = 0;
    // The hashed files first, index.html last: it must never name a file that is not there yet.
    for (const name of built.filter((n) => n !== html)) {
      bytes += (await stat(join(staging, name))).size;
      await rename(join(staging, name), join(outDir, name));
    }
    bytes += (await stat(join(staging, html))).size;
    await rename(join(staging, html), join(outDir, "index.html"));
    const files = ["index.html", ...built.filter((n) => n !== html)];
    await pruneOld(outDir, new Set(files));
    return { files, bytes };
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

async function pruneOld(dir: string, keep: Set<string>): Promise<void> {
  const now = Date.now();
  for (const name of await readdir(dir)) {
    if (keep.has(name)) continue;
    const path = join(dir, name);
    const info = await stat(path).catch(() => undefined);
    if (info && now - info.mtimeMs > KEEP_OLD_MS) await rm(path, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  const started = performance.now();
  const { files, bytes } = await buildConsole(process.argv[2] ?? CONSOLE_DIST);
  const ms = Math.round(performance.now() - started);
  console.log(`console: ${files.length} files, ${(bytes / 1024).toFixed(1)} KiB in ${basename(CONSOLE_DIST)}/ (${ms} ms)`);
}
