// npm run build: the single binary dist/warden, `bun build --compile` of src/binary.ts: the
// service and the CLI with the Bun runtime, every sql/ file, PGlite's WebAssembly and data files
// and a fresh build of the web console inside one executable that needs no node_modules
// (docs/deployment.md).
import { mkdirSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { buildConsole } from "../src/console/build.ts";

const ROOT = join(import.meta.dir, "..");
const OUT = join(ROOT, "dist", "warden");

const started = performance.now();
mkdirSync(join(ROOT, "dist"), { recursive: true });
// Its own console build, so the binary holds exactly one (dist/console keeps older files a while).
const consoleDir = mkdtempSync(join(tmpdir(), "warden-console-"));
try {
  const built = await buildConsole(consoleDir);
  const build = Bun.spawnSync([process.execPath, "build", "--compile", "src/binary.ts", "src/db/pglite-thread.ts", "--outfile", OUT], {
    cwd: ROOT,
    env: { ...process.env, WARDEN_CONSOLE_DIR: consoleDir },
    stdout: "inherit",
    stderr: "inherit",
  });
  if (build.exitCode !== 0) process.exit(build.exitCode ?? 1);
  const megabytes = (statSync(OUT).size / 1024 / 1024).toFixed(1);
  console.log(`build: ${relative(ROOT, OUT)}, ${megabytes} MiB, console ${built.files.length} files, in ${Math.round(performance.now() - started)} ms`);
} finally {
  rmSync(consoleDir, { recursive: true, force: true });
}
