// The embedded database: PGlite, on a thread of its own (src/db/pglite-thread.ts) where the
// runtime has workers, else in this thread. One process holds a data directory at a time.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import type { PGlite } from "@electric-sql/pglite";
import type { Driver, DriverSession } from "./driver.ts";
import { createPglite, dumpExclusive, session, type PgliteAssets } from "./pglite-open.ts";
import type { ThreadReply, ThreadRequest } from "./pglite-thread.ts";
import { DataDirInUseError } from "./errors.ts";

export type { PgliteAssets } from "./pglite-open.ts";

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // Only "no such process" proves the owner gone. EPERM is someone else's live process, and
    // Deno without --allow-run cannot ask at all: both keep the lock.
    return (err as NodeJS.ErrnoException).code !== "ESRCH";
  }
}

/**
 * PGlite is one process's database: a second process opening the same folder would corrupt it.
 * A lock file with the owner's pid refuses a second opener while the first lives, and a stale
 * lock (its process gone) is taken over.
 */
function lockDataDir(dataDir: string): () => void {
  const lockFile = `${dataDir}.lock`;
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(lockFile, String(process.pid), { flag: "wx" });
      return () => rmSync(lockFile, { force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      const owner = Number(readFileSync(lockFile, "utf8"));
      if (Number.isInteger(owner) && owner > 0 && owner !== process.pid && alive(owner)) {
        throw new DataDirInUseError(dataDir, owner);
      }
      rmSync(lockFile, { force: true });
    }
  }
  throw new Error(`could not lock ${dataDir}`);
}

// A request without its id (Omit over each member of the union, not over the union).
type ThreadRequestBody = ThreadRequest extends infer R ? (R extends ThreadRequest ? Omit<R, "id"> : never) : never;

/**
 * The thread's client. Statements go as messages, in order, and PGlite runs them in that order; a
 * transaction is PGlite's own on the thread, held open until fn settles, and keeps every other
 * statement out meanwhile, as it does in one thread. If the thread dies, every call in flight and
 * every later one fails.
 */
async function threadDriver(worker: Worker, dataDir: string | undefined, assets: PgliteAssets | undefined): Promise<Driver> {
  const waiting = new Map<number, { resolve: (value: unknown) => void; reject: (err: Error) => void }>();
  let next = 1;
  let dead: Error | undefined;
  const die = (err: Error) => {
    dead ??= err;
    for (const w of waiting.values()) w.reject(dead);
    waiting.clear();
  };
  const listeners = new Map<string, Set<(payload: string) => void>>();
  const listen = async (channel: string, fn: (payload: string) => void) => {
    const heard = listeners.get(channel);
    if (heard) return void heard.add(fn);
    listeners.set(channel, new Set([fn]));
    await call({ op: "listen", channel });
  };
  worker.onmessage = (ev: MessageEvent<ThreadReply>) => {
    const reply = ev.data;
    if ("channel" in reply) return listeners.get(reply.channel)?.forEach((fn) => fn(reply.payload));
    const w = waiting.get(reply.id);
    if (!w) return;
    waiting.delete(reply.id);
    if ("error" in reply) w.reject(Object.assign(new Error(reply.error.message), { code: reply.error.code, constraint: reply.error.constraint }));
    else w.resolve(reply.result);
  };
  worker.onerror = (ev: ErrorEvent) => die(new Error(`the embedded database's thread failed: ${ev.message}`));
  // Registered before the request is sent: a reply is never earlier than its waiter.
  const expect = <T>(id: number) => new Promise<T>((resolve, reject) => waiting.set(id, { resolve: resolve as (v: unknown) => void, reject }));
  const call = <T>(request: ThreadRequestBody): Promise<T> => {
    if (dead) return Promise.reject(dead);
    const id = next++;
    const answer = expect<T>(id);
    worker.postMessage({ ...request, id });
    return answer;
  };
  const on = (tx?: number): DriverSession => ({
    run: (text, params) => call({ op: "run", text, params, tx }),
    script: (text) => call({ op: "script", text, tx }),
  });

  try {
    await call({ op: "open", dataDir, assets });
  } catch (err) {
    worker.terminate();
    throw err;
  }
  const own = on();
  return {
    kind: "embedded",
    ...own,
    pipeline: own,
    dumpDataDir: (checkpoint) => call<Uint8Array>({ op: "dump", checkpoint }),
    async transaction(fn) {
      const tx = await call<number>({ op: "begin" });
      const ended = expect<void>(-tx);
      let result;
      try {
        result = await fn(on(tx));
      } catch (err) {
        await call({ op: "end", tx, commit: false });
        await ended.catch(() => {});
        throw err;
      }
      await call({ op: "end", tx, commit: true });
      await ended;
      return result;
    },
    listen,
    subscribe: listen,
    async close() {
      try {
        await call({ op: "close" });
      } finally {
        worker.terminate();
        die(new Error("the embedded database is closed"));
      }
    },
  };
}

/** Embedded PostgreSQL (WASM) in `dataDir`, or in memory when dataDir is "memory://". */
export async function openPglite(dataDir: string, assets?: PgliteAssets): Promise<Driver> {
  const inMemory = dataDir === "memory://";
  // PGlite creates only the last folder of the path; DATA_DIR itself may not exist yet.
  if (!inMemory) mkdirSync(dataDir, { recursive: true });
  const unlock = inMemory ? () => {} : lockDataDir(dataDir);
  const where = inMemory ? undefined : dataDir;
  try {
    const driver = typeof Worker === "function" ? await threadDriver(newThread(assets?.thread), where, assets) : await inProcess(where, assets);
    const close = driver.close;
    return { ...driver, close: () => close().finally(unlock) };
  } catch (err) {
    unlock();
    throw err;
  }
}

/**
 * Makes the data directory dataDir from a dump (a backup): PGlite unpacks it and starts on it
 * once, under the same lock as any opener, then closes it.
 */
export async function restorePglite(dataDir: string, dump: Uint8Array, assets?: PgliteAssets): Promise<void> {
  mkdirSync(dataDir, { recursive: true });
  const unlock = lockDataDir(dataDir);
  try {
    const db = await createPglite(dataDir, assets, new Blob([dump as Uint8Array<ArrayBuffer>]));
    await db.close();
  } finally {
    unlock();
  }
}

function newThread(entry = new URL("./pglite-thread.ts", import.meta.url).href): Worker {
  return new Worker(entry, { type: "module" });
}

/** PGlite in this thread: where the runtime has no workers. */
async function inProcess(dataDir: string | undefined, assets?: PgliteAssets): Promise<Driver> {
  return pgliteDriver(await createPglite(dataDir, assets));
}

/** A driver over a PGlite its caller holds (scripts/sql-types.ts also asks it to describe queries). */
export function pgliteDriver(db: PGlite): Driver {
  const own = session(db);
  return {
    kind: "embedded",
    ...own,
    pipeline: own,
    transaction: (fn) => db.transaction((tx) => fn(session(tx))),
    listen: async (channel, fn) => void (await db.listen(channel, fn)),
    subscribe: async (channel, fn) => void (await db.listen(channel, fn)),
    dumpDataDir: (checkpoint) => dumpExclusive(db, checkpoint),
    close: () => db.close(),
  };
}
