import { PGlite, types, type PGliteOptions, type Transaction } from "@electric-sql/pglite";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import type { Driver, DriverSession, Row } from "./driver.ts";

// int8 (counts, sums) as JS numbers, as the postgres driver does: warden's counters stay far
// below 2^53.
const parsers = { [types.INT8]: (v: string) => Number(v) };

function session(db: PGlite | Transaction): DriverSession {
  return {
    async run(text, params) {
      const result = await db.query<Row>(text, params as unknown[]);
      return result.rows;
    },
    async script(text) {
      await db.exec(text);
    },
  };
}

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
        throw new Error(`the embedded database in ${dataDir} is in use by process ${owner}; stop it first (or use DATABASE_URL)`);
      }
      rmSync(lockFile, { force: true });
    }
  }
  throw new Error(`could not lock ${dataDir}`);
}

/** Paths of PGlite's own files when they are not beside its code (the single binary embeds them). */
export interface PgliteAssets {
  wasm: string;
  initdbWasm: string;
  /** The file-system bundle, pglite.data. */
  data: string;
}

// PGlite finds these next to its module by default, which inside a binary is a folder that
// does not exist; its options take them as compiled modules and a Blob instead.
async function assetOptions(assets?: PgliteAssets): Promise<Partial<PGliteOptions>> {
  if (!assets) return {};
  const [wasm, initdbWasm, data] = await Promise.all([readFile(assets.wasm), readFile(assets.initdbWasm), readFile(assets.data)]);
  const [pgliteWasmModule, initdbWasmModule] = await Promise.all([WebAssembly.compile(wasm), WebAssembly.compile(initdbWasm)]);
  return { pgliteWasmModule, initdbWasmModule, fsBundle: new Blob([data]) };
}

/**
 * PGlite's own start parameters plus a smaller buffer pool. Its default, shared_buffers = 128MB,
 * is touched as it fills and is most of the service's memory (RSS ~320 MB for PGlite alone after
 * some work, ~170 MB with 16MB); the data files stay in the operating system's page cache anyway,
 * which a one-process embedded database shares with nothing (docs/performance.md).
 */
const START_PARAMS = [...PGlite.defaultStartParams, "-c", "shared_buffers=16MB"];

/** Embedded PostgreSQL (WASM) in `dataDir`, or in memory when dataDir is "memory://". */
export async function openPglite(dataDir: string, assets?: PgliteAssets): Promise<Driver> {
  const inMemory = dataDir === "memory://";
  // PGlite creates only the last folder of the path; DATA_DIR itself may not exist yet.
  if (!inMemory) mkdirSync(dataDir, { recursive: true });
  const unlock = inMemory ? () => {} : lockDataDir(dataDir);
  let db: PGlite;
  try {
    db = await PGlite.create(inMemory ? undefined : dataDir, { parsers, startParams: START_PARAMS, ...(await assetOptions(assets)) });
  } catch (err) {
    unlock();
    throw err;
  }
  const own = session(db);
  return {
    kind: "embedded",
    ...own,
    pipeline: own,
    transaction: (fn) => db.transaction((tx) => fn(session(tx))),
    async close() {
      await db.close();
      unlock();
    },
  };
}
