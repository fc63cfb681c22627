// The peers' servers for the peers bench: Cerbos's own PDP (its HTTP API, with TLS), and Cedar and
// Casbin each behind the minimal HTTPS server (cedar.ts, casbin.ts), all with the same development
// certificate as warden's. Each is a process of its own, so its CPU can be read from /proc.
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { loadTls } from "../../../src/http/tls.ts";
import { freePort } from "../../free-port.ts";
import { insecure } from "../service.ts";
import { cerbosBinary } from "./install.ts";

export interface PeerServer {
  url: string;
  proc: Subprocess;
  /** The engine's own version where it says one (Cerbos's binary, Cedar's language and SDK). */
  version: string;
}

const ROOT = join(import.meta.dir, "../../..");

/** The development certificate of warden (src/http/tls.ts) in dir/tls, made once. */
export async function certificate(dir: string): Promise<{ cert: string; key: string }> {
  await loadTls({ dataDir: dir, log: () => {} });
  return { cert: join(dir, "tls/dev-cert.pem"), key: join(dir, "tls/dev-key.pem") };
}

/** Cerbos's PDP on the policies of bench/peers/cerbos/policies, with its defaults otherwise (its request log included); flags are added to `cerbos server`'s (a profile: `--debug-listen-addr`, then gops' CPU profile). */
export async function startCerbos(peersDir: string, workDir: string, flags: string[] = []): Promise<PeerServer> {
  const tls = await certificate(workDir);
  const http = freePort();
  const config = join(workDir, "cerbos.yaml");
  writeFileSync(
    config,
    [
      "server:",
      `  httpListenAddr: "127.0.0.1:${http}"`,
      `  grpcListenAddr: "127.0.0.1:${freePort()}"`,
      "  tls:",
      `    cert: ${tls.cert}`,
      `    key: ${tls.key}`,
      "storage:",
      "  driver: disk",
      "  disk:",
      `    directory: ${join(ROOT, "bench/peers/cerbos/policies")}`,
      "    watchForChanges: false",
      "telemetry:",
      "  disabled: true",
      "",
    ].join("\n"),
  );
  const binary = cerbosBinary(peersDir);
  const version = `Cerbos ${spawnSync(binary, ["--version"], { encoding: "utf8" }).stdout.trim().split("\n")[0]}`;
  const proc = Bun.spawn([binary, "server", `--config=${config}`, ...flags], { stdout: "ignore", stderr: "ignore", env: { ...process.env, CERBOS_NO_TELEMETRY: "1" } });
  const url = `https://127.0.0.1:${http}`;
  const started = performance.now();
  while (!(await fetch(`${url}/_cerbos/health`, insecure).then((r) => r.ok, () => false))) {
    if (proc.exitCode !== null || performance.now() - started > 20_000) {
      proc.kill();
      throw new Error(`peers: Cerbos did not become healthy (exit ${proc.exitCode})`);
    }
    await Bun.sleep(50);
  }
  return { url, proc, version };
}

/** Cedar or Casbin behind the minimal HTTPS server, on the certificate in workDir. */
export async function startWrapped(engine: "cedar" | "casbin", peersDir: string, workDir: string): Promise<PeerServer> {
  await certificate(workDir);
  const proc = Bun.spawn([process.execPath, join(import.meta.dir, `${engine}.ts`), peersDir, workDir], { stdout: "pipe", stderr: "inherit" });
  const { value } = await proc.stdout.getReader().read();
  let said: { port: number; version: string };
  try {
    said = JSON.parse(new TextDecoder().decode(value).trim().split("\n")[0]);
  } catch {
    proc.kill();
    throw new Error(`peers: the ${engine} server did not start`);
  }
  const { port, version } = said;
  return { url: `https://127.0.0.1:${port}`, proc, version };
}
