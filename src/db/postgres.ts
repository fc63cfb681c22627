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

/**
 * A real PostgreSQL server through postgres.js: `max` connections in all, one of them (when there
 * are two or more) kept for the pipeline, the rest a pool. postgres.js sends a statement to a busy
 * connection only when none is idle, so the pool would spread statements that must follow each
 * other over several server sessions; a client of its own with one connection pipelines them.
 */
export async function openPostgres(url: string, opts: { max?: number } = {}): Promise<Driver> {
  const max = opts.max ?? 10;
  const sql = client(url, max > 1 ? max - 1 : 1);
  const lane = max > 1 ? client(url, 1) : sql;
  return {
    kind: "postgres",
    ...session(sql),
    pipeline: session(lane),
    transaction: (fn) => sql.begin((tx) => fn(session(tx))) as Promise<never>,
    // postgres.js listens on a connection of its own, and listens again after it reconnects.
    subscribe: async (channel, fn) => void (await sql.listen(channel, fn)),
    close: async () => {
      await Promise.all([sql.end({ timeout: 5 }), lane === sql ? undefined : lane.end({ timeout: 5 })]);
    },
  };
}

function client(url: string, max: number): Sql {
  return postgres(url, {
    max,
    onnotice: () => {},
    connect_timeout: 5,
    // A query that needs a new connection waits this long (seconds) after the last failed one
    // before trying. postgres.js's default grows to 20 s while the server is down, so requests
    // hung instead of getting a quick 503, and recovery lagged; a refused connect costs nothing.
    backoff: (failures: number) => Math.min(0.25, 0.01 * 2 ** failures),
    // int8 as a JS number, the same as the embedded driver.
    types: { int8: { to: 20, from: [20], serialize: (x: unknown) => String(x), parse: (x: string) => Number(x) } },
  } as unknown as postgres.Options<Record<string, never>>) as unknown as Sql;
}
