// npm run lint:openapi: the OpenAPI document a fresh service serves, checked by the two tools its
// users run on it, both pinned in package.json: Redocly CLI lints it under redocly.yaml
// (recommended-strict), and openapi-typescript, the most used TypeScript generator, turns it into
// types (it lints first under the same redocly.yaml, and refuses on any error: it reads no ignore
// file, so no finding of either may be ignored). test/app/openapi-lint.test.ts runs both on the
// document of the test service.
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "..");
const REDOCLY = join(ROOT, "node_modules", "@redocly", "cli", "bin", "cli.js");
const OPENAPI_TYPESCRIPT = join(ROOT, "node_modules", "openapi-typescript", "bin", "cli.js");
/** What to run when openapi-typescript is missing from node_modules. */
export const OPENAPI_TYPESCRIPT_INSTALL = "npm install --save-dev --save-exact openapi-typescript@7.13.0";

export interface ToolRun {
  code: number;
  output: string;
}

/**
 * Runs a tool (node, offline: no usage report, no update check) in a fresh folder holding the
 * document's text as openapi.json beside a copy of redocly.yaml; `read` takes what it wrote.
 */
async function inWorkDir<T>(json: string, args: string[], read: (dir: string, run: ToolRun) => T): Promise<T> {
  const work = mkdtempSync(join(tmpdir(), "warden-openapi-lint-"));
  try {
    writeFileSync(join(work, "openapi.json"), json);
    copyFileSync(join(ROOT, "redocly.yaml"), join(work, "redocly.yaml"));
    const child = Bun.spawn(["node", ...args], {
      cwd: work,
      env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true", NO_COLOR: "1" },
      stdout: "pipe",
      stderr: "pipe",
    });
    const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
    return read(work, { code, output: stdout + stderr });
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** Lints a document's text with Redocly CLI: its exit code and what the linter printed. */
export function lintOpenApi(json: string): Promise<ToolRun> {
  return inWorkDir(json, [REDOCLY, "lint", "--format=stylish", "openapi.json"], (_, run) => run);
}

/** Whether openapi-typescript is in node_modules. */
export function hasOpenApiTypescript(): boolean {
  return existsSync(OPENAPI_TYPESCRIPT);
}

/**
 * Generates TypeScript types from a document's text with openapi-typescript, as a user of the API
 * would (`npx openapi-typescript openapi.json -o api.d.ts`) beside our redocly.yaml: its exit code,
 * what it printed, and the types ("" when it refused the document).
 */
export function generateOpenApiTypes(json: string): Promise<ToolRun & { types: string }> {
  return inWorkDir(json, [OPENAPI_TYPESCRIPT, "openapi.json", "--redocly", "redocly.yaml", "-o", "api.d.ts"], (dir, run) => {
    const out = join(dir, "api.d.ts");
    return { ...run, types: run.code === 0 && existsSync(out) ? readFileSync(out, "utf8") : "" };
  });
}

if (import.meta.main) {
  const { currentOpenApi } = await import("./api-docs.ts");
  const json = JSON.stringify(await currentOpenApi());
  const redocly = await lintOpenApi(json);
  console.log(redocly.output.trim());
  let failed = redocly.code !== 0;
  if (!hasOpenApiTypescript()) {
    console.error(`openapi-typescript is not installed: ${OPENAPI_TYPESCRIPT_INSTALL}`);
    failed = true;
  } else {
    const generated = await generateOpenApiTypes(json);
    console.log(generated.output.trim());
    if (generated.code !== 0) failed = true;
    else console.log(`openapi-typescript: ${generated.types.split("\n").length} lines of types`);
  }
  process.exit(failed ? 1 : 0);
}
