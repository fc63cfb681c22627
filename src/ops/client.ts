// The CLI's side of operator work: one OpsTarget whether the running service does the work over
// its channel (src/ops/channel.ts) or the CLI opened the database itself; both answer through
// opsHandler, so scripts, refusals and exit statuses are the same either way.
import { lstatSync } from "node:fs";
import { connect } from "node:net";
import type { Db, Queryable } from "../db/index.ts";
import { opsHandler } from "./handler.ts";
import { notPrivate, opsSocketDir, opsSocketPath } from "./channel.ts";
import { fromFailure, lineReader, type OpsReply, type OpsRequest } from "./protocol.ts";

export interface OpsTarget {
  /** "service": the running service's channel; else the database this process opened. */
  readonly via: "service" | "embedded" | "postgres";
  /** One request; onChunk hears of each part of a backup as it arrives. */
  request(request: OpsRequest, onChunk?: (bytes: number) => void): Promise<unknown>;
  close(): Promise<void>;
}

/** A database this process opened. Results pass through JSON, as over the channel. */
export function directTarget(db: Db): OpsTarget {
  const handle = opsHandler(db);
  return {
    via: db.kind,
    async request(request) {
      const result = await handle(request);
      return result instanceof Uint8Array ? result : JSON.parse(JSON.stringify(result ?? null));
    },
    close: () => db.close(),
  };
}

/**
 * The running service's channel in dataDir, or undefined when no service listens there (no
 * socket, or a stale one). A socket whose folder others could reach is refused: it might not be
 * our service's.
 */
export async function connectOpsChannel(dataDir: string): Promise<OpsTarget | undefined> {
  const path = opsSocketPath(dataDir);
  try {
    lstatSync(path);
  } catch {
    return undefined;
  }
  const why = notPrivate(opsSocketDir(dataDir), 0o077) ?? notPrivate(path, 0o077);
  if (why) throw new Error(`refusing the operator socket: ${why}`);
  const socket = connect({ path });
  const connected = await new Promise<boolean>((resolve, reject) => {
    socket.once("connect", () => resolve(true));
    socket.once("error", (err: NodeJS.ErrnoException) => (err.code === "ECONNREFUSED" || err.code === "ENOENT" ? resolve(false) : reject(err)));
  });
  if (!connected) return undefined;

  let waiter: { onReply: (reply: OpsReply) => void; fail: (err: Error) => void } | undefined;
  let broken: Error | undefined;
  socket.on("data", lineReader((line) => waiter?.onReply(JSON.parse(line) as OpsReply)));
  socket.on("error", (err) => (broken = err));
  socket.on("close", () => {
    broken ??= new Error("the service closed the operator channel (did it stop?)");
    waiter?.fail(broken);
  });
  return {
    via: "service",
    request(request, onChunk) {
      if (broken) return Promise.reject(broken);
      return new Promise((resolve, reject) => {
        const chunks: Buffer[] = [];
        let received = 0;
        waiter = {
          fail: reject,
          onReply(reply) {
            if ("chunk" in reply) {
              const chunk = Buffer.from(reply.chunk, "base64");
              chunks.push(chunk);
              onChunk?.((received += chunk.length));
              return;
            }
            waiter = undefined;
            if (!reply.ok) reject(fromFailure(reply.error));
            else resolve(request.op === "backup" ? new Uint8Array(Buffer.concat(chunks)) : reply.result);
          },
        };
        socket.write(JSON.stringify(request) + "\n");
      });
    },
    async close() {
      socket.end();
    },
  };
}

/** Named queries through a target, for code written against Queryable (receipt checks, key rotation). */
export function targetQueryable(target: OpsTarget): Queryable {
  const query = async (name: string, params: readonly unknown[] = []) => (await target.request({ op: "query", name, params: [...params] })) as unknown[];
  return {
    query: query as Queryable["query"],
    one: (async (name: string, params?: readonly unknown[]) => (await query(name, params))[0]) as Queryable["one"],
    exec: () => Promise.reject(new Error("operator commands run no whole SQL files")),
  };
}
