// The embedded database's own thread: the worker that owns PGlite. src/db/pglite.ts sends it statements, scripts and transactions as messages and gets rows or
// errors back. Its WebAssembly memory lives in this thread's heap, not in the service's.
import type { PGlite } from "@electric-sql/pglite";
import { createPglite, dumpExclusive, session, type PgliteAssets } from "./pglite-open.ts";
import type { DriverSession } from "./driver.ts";

/** What the service's thread sends. tx names a transaction begun by a "begin" message. */
export type ThreadRequest =
  | { id: number; op: "open"; dataDir: string | undefined; assets?: PgliteAssets }
  | { id: number; op: "run"; text: string; params: readonly unknown[]; tx?: number }
  | { id: number; op: "script"; text: string; tx?: number }
  | { id: number; op: "begin" }
  | { id: number; op: "end"; tx: number; commit: boolean }
  | { id: number; op: "listen"; channel: string }
  | { id: number; op: "dump"; checkpoint: string }
  | { id: number; op: "close" };

/**
 * The answer to request id; a transaction's own outcome answers id -tx once it has ended. A
 * notification on a channel listened to is posted before the answer of the statement that sent it.
 */
export type ThreadReply =
  | { id: number; result: unknown }
  | { id: number; error: { code?: string; constraint?: string; message: string } }
  | { channel: string; payload: string };

const port = globalThis as unknown as { postMessage(reply: ThreadReply): void; onmessage: ((ev: MessageEvent<ThreadRequest>) => void) | null };

let db: PGlite | undefined;

// JavaScriptCore sizes this thread's collections by its heap, which counts PGlite's WebAssembly
// memory, so the garbage of rows already answered piled up by hundreds of megabytes (an export of
// a large log) before a collection ran. A full collection once the text of the rows answered since
// the last one passes this many characters keeps it small.
const TEXT_PER_COLLECTION = 2_000_000;
let textSinceCollection = 0;

/** The characters of a result's text values: most of what answering it leaves behind. */
function textOf(rows: readonly Record<string, unknown>[]): number {
  let chars = 0;
  for (const row of rows) for (const key in row) if (typeof row[key] === "string") chars += (row[key] as string).length;
  return chars;
}
const collect = (globalThis as { Bun?: { gc(force: boolean): void } }).Bun?.gc;

/** Statements outside a transaction, made once the database is open. */
let own: DriverSession | undefined;
const open = new Map<number, { session: DriverSession; end: (commit: boolean) => void }>();
let nextTx = 1;

function failure(id: number, err: unknown): ThreadReply {
  const e = err as { code?: unknown; constraint?: unknown; message?: unknown };
  return {
    id,
    error: {
      code: typeof e?.code === "string" ? e.code : undefined,
      constraint: typeof e?.constraint === "string" ? e.constraint : undefined,
      message: typeof e?.message === "string" ? e.message : String(err),
    },
  };
}

function opened(tx: number) {
  const found = open.get(tx);
  if (!found) throw new Error(`no open transaction ${tx}`);
  return found;
}

function on(tx: number | undefined): DriverSession {
  if (tx !== undefined) return opened(tx).session;
  if (!own) throw new Error("the database is not open");
  return own;
}

/**
 * A transaction is PGlite's own (which keeps every other statement out until it ends): it stays
 * open until the service's thread sends "end", and its outcome (committed, or the error of its
 * commit or rollback) answers -tx. Resolves with tx once the transaction has begun.
 */
function begin(): Promise<number> {
  const tx = nextTx++;
  return new Promise((begun) => {
    db!
      .transaction(async (t) => {
        const commit = await new Promise<boolean>((end) => {
          open.set(tx, { session: session(t), end });
          begun(tx);
        });
        if (!commit) await t.rollback();
      })
      .then(
        () => port.postMessage({ id: -tx, result: null }),
        (err) => port.postMessage(failure(-tx, err)),
      )
      .finally(() => open.delete(tx));
  });
}

async function handle(m: ThreadRequest): Promise<unknown> {
  switch (m.op) {
    case "open":
      db = await createPglite(m.dataDir, m.assets);
      own = session(db);
      return null;
    case "run": {
      const rows = await on(m.tx).run(m.text, m.params);
      textSinceCollection += textOf(rows as Record<string, unknown>[]);
      return rows;
    }
    case "script":
      await on(m.tx).script(m.text);
      return null;
    case "begin":
      return begin();
    case "end":
      opened(m.tx).end(m.commit);
      return null;
    case "listen":
      await db!.listen(m.channel, (payload) => port.postMessage({ channel: m.channel, payload }));
      return null;
    case "dump":
      return dumpExclusive(db!, m.checkpoint);
    case "close":
      await db?.close();
      return null;
  }
}

port.onmessage = (ev) => {
  const m = ev.data;
  handle(m).then(
    (result) => {
      port.postMessage({ id: m.id, result });
      if (textSinceCollection >= TEXT_PER_COLLECTION && collect) {
        textSinceCollection = 0;
        collect(true);
      }
    },
    (err) => port.postMessage(failure(m.id, err)),
  );
};
