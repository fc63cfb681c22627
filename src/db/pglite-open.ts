// Opening PGlite and running statements on it: shared by the database's own thread
// (src/db/pglite-thread.ts) and by the in-process driver (src/db/pglite.ts).
import { PGlite, types, type PGliteOptions, type Transaction } from "@electric-sql/pglite";
import { readFile } from "node:fs/promises";
import type { DriverSession, Row } from "./driver.ts";

// int8 (counts, sums) as JS numbers, as the postgres driver does: warden's counters stay far
// below 2^53.
const parsers = { [types.INT8]: (v: string) => Number(v) };

export function session(db: PGlite | Transaction): DriverSession {
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

/** Paths of PGlite's own files when they are not beside its code (the single binary embeds them). */
export interface PgliteAssets {
  wasm: string;
  initdbWasm: string;
  /** The file-system bundle, pglite.data. */
  data: string;
  /** The entry of the database's thread (src/db/pglite-thread.ts) as the binary names it. */
  thread?: string;
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
 * PGlite's own start parameters plus a smaller buffer pool: the default 128MB, touched as it
 * fills, would be most of the service's memory, and the data files stay in the operating
 * system's page cache anyway.
 */
const START_PARAMS = [...PGlite.defaultStartParams, "-c", "shared_buffers=16MB"];

/**
 * PGlite in dataDir (created if new), or in memory when dataDir is undefined; `load` fills a new
 * data directory from a dump (dumpExclusive) before it starts.
 */
export async function createPglite(dataDir: string | undefined, assets?: PgliteAssets, load?: Blob): Promise<PGlite> {
  return PGlite.create(dataDir, { parsers, startParams: START_PARAMS, ...(await assetOptions(assets)), ...(load ? { loadDataDir: load } : {}) });
}

/**
 * A consistent copy of the data directory: PGlite's transaction keeps every other statement and
 * transaction out until it ends, the checkpoint puts every committed change into the data files,
 * and the files are copied before the transaction lets anything else in.
 */
export async function dumpExclusive(db: PGlite, checkpoint: string): Promise<Uint8Array> {
  return db.transaction(async (tx) => {
    await tx.exec(checkpoint);
    return new Uint8Array(await (await db.dumpDataDir("gzip")).arrayBuffer());
  });
}
