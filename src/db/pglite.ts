import { PGlite, types, type Transaction } from "@electric-sql/pglite";
import { mkdirSync } from "node:fs";
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

/** Embedded PostgreSQL (WASM) in `dataDir`, or in memory when dataDir is "memory://". */
export async function openPglite(dataDir: string): Promise<Driver> {
  // PGlite creates only the last folder of the path; DATA_DIR itself may not exist yet.
  if (dataDir !== "memory://") mkdirSync(dataDir, { recursive: true });
  const db = await PGlite.create(dataDir === "memory://" ? undefined : dataDir, { parsers });
  return {
    kind: "embedded",
    ...session(db),
    transaction: (fn) => db.transaction((tx) => fn(session(tx))),
    close: () => db.close(),
  };
}
