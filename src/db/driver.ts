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
  transaction<T>(fn: (session: DriverSession) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}
