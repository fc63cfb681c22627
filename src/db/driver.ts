// The two ways warden reaches PostgreSQL. Each driver only runs text; naming, loading and
// error normalisation live in ./index.ts so both behave the same.
export type Row = Record<string, unknown>;

export interface DriverSession {
  /** One statement with `$n` parameters (prepared where the driver supports it). */
  run(text: string, params: readonly unknown[]): Promise<Row[]>;
  /** A whole script (several statements, no parameters). */
  script(text: string): Promise<void>;
}

export interface Driver extends DriverSession {
  readonly kind: "embedded" | "postgres";
  /**
   * Statements in order on one connection of their own, each sent without waiting for the answers
   * of those before it (pipelining): the server starts the next as soon as it has finished the
   * last. The driver itself where it has no such connection (PGlite runs one statement at a time).
   */
  readonly pipeline: DriverSession;
  transaction<T>(fn: (session: DriverSession) => Promise<T>): Promise<T>;
  /**
   * Calls fn with the payload of each NOTIFY on channel, before the answer of the statement whose
   * commit sent it. Only the embedded database has it: its one session is this process's alone,
   * so no change can commit without this process hearing of it first.
   */
  listen?(channel: string, fn: (payload: string) => void): Promise<void>;
  /**
   * Calls fn with the payload of each NOTIFY on channel, soon after the commit that sent it (on
   * PostgreSQL through a connection of its own, so not before the committing statement's answer):
   * for waking waiters, never for a freshness rule.
   */
  subscribe(channel: string, fn: (payload: string) => void): Promise<void>;
  /**
   * The embedded database only: a gzipped tar of the data directory, taken inside one transaction
   * (so no other statement runs meanwhile) after `checkpoint` has written every change to the files.
   */
  dumpDataDir?(checkpoint: string): Promise<Uint8Array>;
  close(): Promise<void>;
}
