// The command line as a user runs it: `bun src/cli/main.ts ...` in a child process, its exit code,
// output and (when stdout is JSON) the parsed answer.
import { join } from "node:path";

const ROOT = join(import.meta.dir, "..", "..");

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
  json: any;
}

/** env is added to this process's (a key set to undefined is removed); stdin, when given, is what the command reads. */
export async function runCli(args: string[], env: Record<string, string | undefined> = {}, opts: { stdin?: string } = {}): Promise<CliRun> {
  const child = Bun.spawn([process.execPath, "src/cli/main.ts", ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdin: opts.stdin === undefined ? "ignore" : new Blob([opts.stdin]),
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  let json: any;
  try {
    json = JSON.parse(stdout);
  } catch {
    json = undefined;
  }
  return { code, stdout, stderr, json };
}
