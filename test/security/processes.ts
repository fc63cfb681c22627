// The service as operators run it: `bun src/cli/main.ts serve` in a process of its own, on the
// real PostgreSQL server, with its output captured; and what the crash and outage tests need
// around it (a TCP proxy to cut, an SMTP server that never answers, the CLI).
import { createServer, connect, type Server, type Socket } from "node:net";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { devCertificate, ROOT } from "./helpers.ts";
import { runCli as runCliAs } from "../helpers/cli.ts";

export interface Child {
  proc: Subprocess<"ignore", "pipe", "pipe">;
  /** The listening URL, from the service's own log line. */
  url: string;
  /** The METRICS_ADDR listener's URL (/metrics, /livez, /readyz), from the same line. */
  metricsUrl: string;
  /** Every line the process wrote, stdout and stderr. */
  lines: string[];
  exited: Promise<number>;
}

async function collect(stream: ReadableStream<Uint8Array>, lines: string[], onLine: () => void): Promise<void> {
  const decoder = new TextDecoder();
  let rest = "";
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    rest += decoder.decode(value, { stream: true });
    const parts = rest.split("\n");
    rest = parts.pop()!;
    for (const line of parts) if (line) lines.push(line);
    onLine();
  }
  if (rest) lines.push(rest);
  onLine();
}

/** Starts `warden serve` on a free port of 127.0.0.1 and waits (startMs at most) until it listens. */
export async function spawnService(env: Record<string, string>, startMs = 30_000): Promise<Child> {
  const { cert, key } = await devCertificate();
  const dataDir = mkdtempSync(join(tmpdir(), "warden-child-"));
  const proc = Bun.spawn([process.execPath, "src/cli/main.ts", "serve"], {
    cwd: ROOT,
    env: {
      ...process.env,
      HOST: "127.0.0.1",
      PORT: "0",
      METRICS_ADDR: "127.0.0.1:0",
      DATA_DIR: dataDir,
      TLS_CERT: cert,
      TLS_KEY: key,
      BCRYPT_COST: "4",
      LOG_LEVEL: "info",
      MAIL_POLL_MS: "100",
      RATE_LIMIT_AUTH_ADDRESS: "1000000/60",
      RATE_LIMIT_LOGIN_EMAIL: "1000000/60",
      RATE_LIMIT_LOGIN_PAIR: "1000000/60",
      RATE_LIMIT_AUTH_NETWORK: "1000000/60",
      RATE_LIMIT_MAIL_EMAIL: "1000000/60",
      PASSWORD_HASH_CONCURRENCY: "1024",
      ...env,
    },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const lines: string[] = [];
  let wake = () => {};
  void collect(proc.stdout, lines, () => wake());
  void collect(proc.stderr, lines, () => wake());
  const exited = proc.exited.then((code) => {
    rmSync(dataDir, { recursive: true, force: true });
    return code;
  });
  const deadline = Date.now() + startMs;
  for (;;) {
    const listening = lines.find((l) => l.includes('"event":"listening"'));
    if (listening) {
      const { url, metrics_url } = JSON.parse(listening);
      return { proc, url, metricsUrl: metrics_url, lines, exited };
    }
    if (proc.exitCode !== null || Date.now() > deadline) throw new Error(`the service did not start:\n${lines.join("\n").slice(-2000)}`);
    await new Promise<void>((resolve) => {
      wake = resolve;
      setTimeout(resolve, 50);
    });
  }
}

/** Runs the CLI to the end; its JSON output parsed when it is JSON. */
/** The command line in a child process, its log lines silenced (test/helpers/cli.ts). */
export function runCli(args: string[], env: Record<string, string>) {
  return runCliAs(args, { LOG_LEVEL: "silent", ...env });
}

/**
 * A TCP forwarder on 127.0.0.1 to the database server: what the service sees of PostgreSQL.
 * `cut()` drops every connection and stops listening (a stopped server: resets, then refusals);
 * `restore()` listens on the same port again.
 */
export async function startProxy(target: { host: string; port: number }) {
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  let port = 0;
  const listen = () =>
    new Promise<void>((resolve, reject) => {
      server = createServer((client) => {
        const upstream = connect(target.port, target.host);
        for (const s of [client, upstream]) {
          sockets.add(s);
          s.on("close", () => sockets.delete(s));
          s.on("error", () => {
            client.destroy();
            upstream.destroy();
          });
        }
        client.pipe(upstream);
        upstream.pipe(client);
      });
      server.once("error", reject);
      server.listen(port, "127.0.0.1", () => {
        port = (server!.address() as { port: number }).port;
        resolve();
      });
    });
  await listen();
  return {
    get port() {
      return port;
    },
    async cut() {
      // close() only calls back once every connection is gone: destroy them, then wait.
      const closed = new Promise<void>((resolve) => server!.close(() => resolve()));
      for (const s of sockets) s.destroy();
      sockets.clear();
      await closed;
    },
    restore: listen,
    async close() {
      const closed = server?.listening ? new Promise<void>((resolve) => server!.close(() => resolve())) : undefined;
      for (const s of sockets) s.destroy();
      await closed;
    },
  };
}

/** An SMTP server that accepts connections and never says a word: mail sent to it hangs. */
export async function startSilentSmtp() {
  const sockets = new Set<Socket>();
  let accepted = 0;
  const server = createServer((s) => {
    accepted++;
    sockets.add(s);
    s.on("error", () => {});
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  return {
    url: `smtp://127.0.0.1:${(server.address() as { port: number }).port}`,
    /** Connections accepted so far. */
    accepted: () => accepted,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** `postgres://user@host:port/db` split up, for the server's own tools (createdb, dropdb). */
export function databaseParts(url: string) {
  const u = new URL(url);
  return { host: u.hostname, port: Number(u.port || 5432), user: decodeURIComponent(u.username || "postgres"), database: u.pathname.slice(1), url: u };
}
