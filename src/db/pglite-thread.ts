// The embedded database's own thread: the worker that owns PGlite (docs/performance.md section
// 26). src/db/pglite.ts sends it statements, scripts and transactions as messages and gets rows or
// errors back. Its WebAssembly memory lives in this thread's heap, not in the service's.
import type { PGlite } from "@electric-sql/pglite";
import { createPglite, session, type PgliteAssets } from "./pglite-open.ts";
import type { DriverSession } from "./driver.ts";

/** What the service's thread sends. tx names a transaction begun by a "begin" message. */
export type ThreadRequest =
  | { id: number; op: "open"; dataDir: string | undefined; assets?: PgliteAssets }
  | { id: number; op: "run"; text: string; params: readonly unknown[]; tx?: number }
  | { id: number; op: "script"; text: string; tx?: number }
  | { id: number; op: "begin" }
  | { id: number; op: "end"; tx: number; commit: boolean }
  | { id: number; op: "close" };

/** The answer to request id; a transaction's own outcome answers id -tx once it has ended. */
export type ThreadReply = { id: number; result: unknown } | { id: number; error: { code?: string; constraint?: string; message: string } };

const port = globalThis as unknown as { postMessage(reply: ThreadReply): void; onmessage: ((ev: MessageEvent<ThreadRequest>) => void) | null };

let db: PGlite | undefined;
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

function on(tx: number | undefined): DriverSession {
  if (tx === undefined) return session(db!);
  const found = open.get(tx);
  if (!found) throw new Error(`no open transaction ${tx}`);
  return found.session;
}

/**
 * A transaction is PGlite's own (which keeps every other statement out until it ends): it stays
 * open until the service's thread sends "end", and its outcome (committed, or the error of its
 * commit or rollback) answers -tx.
 */
function begin(id: number): void {
  const tx = nextTx++;
  db!
    .transaction(async (t) => {
      const commit = await new Promise<boolean>((end) => {
        open.set(tx, { session: session(t), end });
        port.postMessage({ id, result: tx });
      });
      if (!commit) await t.rollback();
    })
    .then(
      () => port.postMessage({ id: -tx, result: null }),
      (err) => port.postMessage(failure(-tx, err)),
    )
    .finally(() => open.delete(tx));
}

async function handle(m: ThreadRequest): Promise<unknown> {
  switch (m.op) {
    case "open":
      db = await createPglite(m.dataDir, m.assets);
      return null;
    case "run":
      return on(m.tx).run(m.text, m.params);
    case "script":
      await on(m.tx).script(m.text);
      return null;
    case "end": {
      const found = open.get(m.tx);
      if (!found) throw new Error(`no open transaction ${m.tx}`);
      found.end(m.commit);
      return null;
    }
    case "close":
      await db?.close();
      return null;
    case "begin":
      throw new Error("begin is answered by the transaction");
  }
}

port.onmessage = (ev) => {
  const m = ev.data;
  if (m.op === "begin") return begin(m.id);
  handle(m).then(
    (result) => port.postMessage({ id: m.id, result }),
    (err) => port.postMessage(failure(m.id, err)),
  );
};
