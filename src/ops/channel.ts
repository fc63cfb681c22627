// The running service's operator channel: a Unix socket in DATA_DIR/ops/ (folder 0700, socket
// 0600: only the data directory's owner can open it) through which `warden ops ...` has the
// service run operator work on its own embedded database while it keeps serving. Requests of one
// connection run one at a time; each operator script is one transaction of the service's Db.
import { chmodSync, lstatSync, mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { Db } from "../db/index.ts";
import type { Logger } from "../log.ts";
import { listenUnix, type LocalConnection } from "../runtime.ts";
import { opsHandler, type OpsHandler } from "./handler.ts";
import { CHUNK_BYTES, lineReader, toFailure, type OpsReply, type OpsRequest } from "./protocol.ts";

export function opsSocketDir(dataDir: string): string {
  return join(dataDir, "ops");
}

export function opsSocketPath(dataDir: string): string {
  return join(opsSocketDir(dataDir), "warden.sock");
}

/** The uid of this process, where the platform has one. */
export function ownUid(): number | undefined {
  return typeof process.getuid === "function" ? process.getuid() : undefined;
}

/** Why path (the socket's folder, or the socket) is not this user's alone, or undefined when it is. */
export function notPrivate(path: string, modeMask: number): string | undefined {
  const stat = lstatSync(path);
  const uid = ownUid();
  if (uid !== undefined && stat.uid !== uid) return `${path} belongs to uid ${stat.uid}, not to this user (uid ${uid})`;
  if ((stat.mode & modeMask) !== 0) return `${path} has mode ${(stat.mode & 0o777).toString(8)}: others may open it`;
  return undefined;
}

export interface OpsChannel {
  readonly path: string;
  /** Stops listening, cuts open connections and removes the socket. */
  close(): Promise<void>;
}

/**
 * Listens on DATA_DIR/ops/warden.sock. Call it while holding the embedded database (its lock
 * proves that no other live service uses this DATA_DIR), so a socket left there is stale: a
 * process that died without a graceful stop.
 */
export async function startOpsChannel(opts: { dataDir: string; db: Db; log: Logger }): Promise<OpsChannel> {
  const dir = opsSocketDir(opts.dataDir);
  const path = opsSocketPath(opts.dataDir);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  const why = notPrivate(dir, 0o077);
  if (why) throw new Error(`the operator channel needs a folder of its owner's alone: ${why}`);
  rmSync(path, { force: true });
  const handle = opsHandler(opts.db);
  const server = await listenUnix(path, (conn) => serveConnection(conn, handle, opts.log));
  chmodSync(path, 0o600);
  opts.log.info("ops_channel_listening", { path });
  return {
    path,
    async close() {
      await server.close();
      rmSync(path, { force: true });
    },
  };
}

function serveConnection(conn: LocalConnection, handle: OpsHandler, log: Logger): void {
  let greeted = false;
  let queue = Promise.resolve();
  const send = (reply: OpsReply) => conn.write(JSON.stringify(reply) + "\n");
  const answer = async (line: string) => {
    let request: OpsRequest;
    try {
      request = JSON.parse(line) as OpsRequest;
    } catch {
      await send({ ok: false, error: { kind: "failed", message: "the operator channel speaks JSON lines" } });
      return conn.end();
    }
    if (!greeted && request.op !== "hello") {
      await send({ ok: false, error: { kind: "failed", message: "the first request must be hello (the schema check)" } });
      return conn.end();
    }
    try {
      const result = await handle(request);
      if (request.op === "hello") greeted = true;
      if (request.op === "script") log.info("ops_script", { file: request.file });
      if (result instanceof Uint8Array) {
        log.info("ops_backup", { bytes: result.length });
        for (let at = 0; at < result.length; at += CHUNK_BYTES) await send({ chunk: Buffer.from(result.subarray(at, at + CHUNK_BYTES)).toString("base64") });
        await send({ ok: true, result: { bytes: result.length } });
      } else {
        await send({ ok: true, result });
      }
    } catch (err) {
      await send({ ok: false, error: toFailure(err) });
    }
  };
  conn.onData(lineReader((line) => void (queue = queue.then(() => answer(line)))));
}
