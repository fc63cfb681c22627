// Running a script under Deno (the dev dependency) from a Bun test, for what must hold on both runtimes.
import { expect } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "..", "..");
const DENO = join(ROOT, "node_modules", ".bin", "deno");

export const hasDeno = existsSync(DENO);

/** `deno run ARGS` from the repository root; it must exit 0 with nothing on stderr. Its stdout as JSON. */
export async function runDeno(args: string[]): Promise<any> {
  const child = Bun.spawn([DENO, "run", ...args], {
    cwd: ROOT,
    env: { ...process.env, DENO_NO_UPDATE_CHECK: "1" },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
  return JSON.parse(stdout);
}
