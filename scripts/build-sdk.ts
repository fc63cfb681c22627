// npm run build:sdk: dist/sdk/, the npm package of the typed client (docs/sdk.md). Steps: the
// OpenAPI document a fresh service serves at /openapi.json; @hey-api/openapi-ts generates types,
// one function per operation and its fetch client (bundled into the output, so no runtime
// dependency) into src/sdk/gen/; tsc writes the declarations of src/sdk/ (which also typechecks
// it: the repository's typecheck leaves out the entry, whose imports exist only after
// generation); Bun's bundler makes one ESM file of the entry with the verifiers the CLI and the
// console share. `--out DIR` builds elsewhere (the tests build into a temporary folder).
import { createClient } from "@hey-api/openapi-ts";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { noNodeCrypto } from "../src/console/build.ts";
import { currentOpenApi } from "./api-docs.ts";

const ROOT = join(import.meta.dir, "..");
const SDK_SRC = join(ROOT, "src", "sdk");
const GEN = join(SDK_SRC, "gen");
export const SDK_DIST = join(ROOT, "dist", "sdk");
export const SDK_NAME = "warden-sdk";

/** Every file under dir, as paths relative to it. */
function walk(dir: string, base = dir): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? walk(path, base) : [relative(base, path)];
  });
}

async function generateClient(): Promise<void> {
  rmSync(GEN, { recursive: true, force: true });
  const spec = await currentOpenApi();
  await createClient({
    input: spec as unknown as Record<string, unknown>,
    // `.js` specifiers: what the declarations keep, and what every module resolution finds.
    output: { path: GEN, module: { extension: ".js" }, tsConfigPath: null },
    // No default baseUrl from the document's `servers` (the build machine's PUBLIC_URL): a client
    // names its service (createWarden's baseUrl).
    plugins: ["@hey-api/typescript", "@hey-api/sdk", { name: "@hey-api/client-fetch", baseUrl: false }],
    logs: { level: "silent" },
  });
}

/** tsc's declarations of src/sdk/ into outDir, with `.ts` specifiers made `.js` for consumers. */
function writeDeclarations(outDir: string): void {
  const work = mkdtempSync(join(tmpdir(), "warden-sdk-types-"));
  try {
    const config = {
      compilerOptions: {
        target: "ES2022",
        module: "ESNext",
        moduleResolution: "bundler",
        // No Bun or Node types: the SDK may only use what every runtime and browser has.
        lib: ["ES2023", "DOM", "DOM.Iterable"],
        types: [],
        strict: true,
        skipLibCheck: true,
        allowImportingTsExtensions: true,
        declaration: true,
        emitDeclarationOnly: true,
        rootDir: ROOT,
        // As in the bundle: the Merkle helpers beside the verifiers import node:crypto, never called.
        paths: { "node:crypto": [join(work, "node-crypto.d.ts")] },
        outDir: join(work, "out"),
      },
      files: [join(SDK_SRC, "index.ts")],
    };
    writeFileSync(join(work, "tsconfig.json"), JSON.stringify(config));
    writeFileSync(join(work, "node-crypto.d.ts"), "export declare function createHash(algorithm: string): { update(data: Uint8Array): void; digest(): Uint8Array };\n");
    const tsc = Bun.spawnSync([process.execPath, join(ROOT, "node_modules", "typescript", "bin", "tsc"), "-p", join(work, "tsconfig.json")], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
    if (tsc.exitCode !== 0) throw new Error(`tsc failed on src/sdk:\n${tsc.stdout.toString()}${tsc.stderr.toString()}`);
    const emitted = join(work, "out", "src", "sdk");
    for (const file of walk(emitted)) {
      const text = readFileSync(join(emitted, file), "utf8").replace(/(from\s+["']\.{1,2}\/[^"']*)\.ts(["'])/g, "$1.js$2");
      // The published types must stand alone: nothing may point back into the service's sources.
      const escape = /from\s+["'](\.\.\/(?:\.\.\/)*)[^"']*["']/g;
      for (const match of text.matchAll(escape)) {
        if (file.split("/").length - 1 < match[1].split("/").length - 1) throw new Error(`${file}: its types import ${match[0]}, outside the SDK`);
      }
      mkdirSync(dirname(join(outDir, file)), { recursive: true });
      writeFileSync(join(outDir, file), text);
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

async function bundle(outDir: string): Promise<void> {
  const result = await Bun.build({
    entrypoints: [join(SDK_SRC, "index.ts")],
    outdir: outDir,
    target: "browser",
    format: "esm",
    // Readable for whoever opens it in node_modules; the bundler's dead-code removal still applies.
    minify: { syntax: true, whitespace: false, identifiers: false },
    sourcemap: "none",
    naming: "index.js",
    plugins: [noNodeCrypto],
  });
  if (!result.success) throw new AggregateError(result.logs, "SDK bundle failed");
}

function packageJson(version: string) {
  return {
    name: SDK_NAME,
    version,
    description: "Typed client for warden's HTTP API, with the offline verifiers of results, proof bundles, approval bundles and webhook signatures",
    type: "module",
    main: "./index.js",
    types: "./index.d.ts",
    exports: { ".": { types: "./index.d.ts", default: "./index.js" } },
    sideEffects: false,
    // WebCrypto Ed25519 and the global fetch (docs/sdk.md).
    engines: { node: ">=20" },
  };
}

export async function buildSdk(outDir = SDK_DIST): Promise<{ files: string[]; bytes: number }> {
  await generateClient();
  // Build beside the target and swap in at the end: a half-built package is never installed.
  mkdirSync(dirname(outDir), { recursive: true });
  const staging = mkdtempSync(join(dirname(outDir), ".sdk-build-"));
  try {
    writeDeclarations(staging);
    await bundle(staging);
    const { version } = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string };
    writeFileSync(join(staging, "package.json"), JSON.stringify(packageJson(version), null, 2) + "\n");
    cpSync(join(ROOT, "docs", "sdk.md"), join(staging, "README.md"));
    rmSync(outDir, { recursive: true, force: true });
    cpSync(staging, outDir, { recursive: true });
    const files = walk(outDir).sort();
    return { files, bytes: files.reduce((sum, f) => sum + statSync(join(outDir, f)).size, 0) };
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  const at = process.argv.indexOf("--out");
  const started = performance.now();
  const out = at > 0 ? process.argv[at + 1] : SDK_DIST;
  const { files, bytes } = await buildSdk(out);
  const js = statSync(join(out, "index.js")).size;
  console.log(`sdk: ${relative(ROOT, out) || out}, ${files.length} files, ${(bytes / 1024).toFixed(0)} KiB (index.js ${(js / 1024).toFixed(0)} KiB) in ${Math.round(performance.now() - started)} ms`);
  process.exit(0);
}
