// npm run lint:openapi: Redocly CLI (pinned in package.json) lints the OpenAPI document a fresh
// service serves, under redocly.yaml (recommended-strict) and .redocly.lint-ignore.yaml.
// test/app/openapi-lint.test.ts runs the same on the document of the test service.
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "..");
const CLI = join(ROOT, "node_modules", "@redocly", "cli", "bin", "cli.js");

/**
 * Lints a document's text: its exit code and what the linter printed. The document is written as
 * openapi.json beside copies of the two settings files, the name the ignore file uses.
 */
export async function lintOpenApi(json: string): Promise<{ code: number; output: string }> {
  const work = mkdtempSync(join(tmpdir(), "warden-openapi-lint-"));
  try {
    writeFileSync(join(work, "openapi.json"), json);
    for (const file of ["redocly.yaml", ".redocly.lint-ignore.yaml"]) copyFileSync(join(ROOT, file), join(work, file));
    const child = Bun.spawn(["node", CLI, "lint", "--format=stylish", "openapi.json"], {
      cwd: work,
      // No usage report to Redocly, no update check: the lint runs offline.
      env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true", NO_COLOR: "1" },
      stdout: "pipe",
      stderr: "pipe",
    });
    const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
    return { code, output: stdout + stderr };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  const { currentOpenApi } = await import("./api-docs.ts");
  const { code, output } = await lintOpenApi(JSON.stringify(await currentOpenApi()));
  console.log(output.trim());
  process.exit(code);
}
