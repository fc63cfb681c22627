import postgres from "postgres";
import type { Driver, DriverSession, Row } from "./driver.ts";

type Sql = postgres.Sql<Record<string, never>>;

function session(sql: Sql | postgres.TransactionSql<Record<string, never>>): DriverSession {
  return {
    async run(text, params) {
      // prepare: true makes postgres.js describe the statement once per connection, so jsonb
      // parameters are serialised by type (pass plain objects) and plans are reused.
      const rows = await sql.unsafe<Row[]>(text, params as postgres.ParameterOrJSON<never>[], { prepare: true });
      return rows as unknown as Row[];
    },
    async script(text) {
      await sql.unsafe(text).simple();
    },
  };
}

/** A real PostgreSQL server through postgres.js. */
export async function openPostgres(url: string, opts: { max?: number } = {}): Promise<Driver> {
  const sql: Sql = postgres(url, {
    max: opts.max ?? 10,
    onnotice: () => {},
    connect_timeout: 5,
    // A query that needs a new connection waits this long (seconds) after the last failed one
    // before trying. postgres.js's default grows to 20 s while the server is down, so requests
    // hung instead of getting a quick 503, and recovery lagged; a refused connect costs nothing.
    backoff: (failures: number) => Math.min(0.25, 0.01 * 2 ** failures),
    // int8 as a JS number, the same as the embedded driver.
    types: { int8: { to: 20, from: [20], serialize: (x: unknown) => String(x), parse: (x: string) => Number(x) } },
  } as unknown as postgres.Options<Record<string, never>>) as unknown as Sql;
  return {
    kind: "postgres",
    ...session(sql),
    transaction: (fn) => sql.begin((tx) => fn(session(tx))) as Promise<never>,
    close: () => sql.end({ timeout: 5 }),
  };
}
