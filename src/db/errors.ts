// One error shape for both drivers, so callers map failures by SQLSTATE and constraint name,
// never by message text. The original message stays server-side (logs), never in a response.
export class DbError extends Error {
  constructor(
    readonly sqlstate: string,
    readonly constraint: string | undefined,
    message: string,
    readonly query?: string,
  ) {
    super(message);
    this.name = "DbError";
  }
}

/** Connection-level failures (server down, refused, reset): the service answers 503 for these. */
export class DbUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "DbUnavailableError";
  }
}

/** Another live process holds the data directory (a running service, or another command). */
export class DataDirInUseError extends Error {
  constructor(dataDir: string, readonly owner: number) {
    super(`the embedded database in ${dataDir} is in use by process ${owner}; stop it first (or use DATABASE_URL)`);
    this.name = "DataDirInUseError";
  }
}

const CONNECTION_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "ENOTFOUND", "CONNECTION_CLOSED", "CONNECTION_ENDED", "CONNECTION_DESTROYED", "CONNECT_TIMEOUT"]);

/** Normalise a postgres.js `PostgresError` or a PGlite `DatabaseError` (or a socket error). */
export function toDbError(err: unknown, query?: string): Error {
  if (err instanceof DbError || err instanceof DbUnavailableError) return err;
  const e = err as { code?: unknown; constraint?: unknown; constraint_name?: unknown; message?: unknown };
  const code = typeof e?.code === "string" ? e.code : undefined;
  const message = typeof e?.message === "string" ? e.message : String(err);
  if (code && CONNECTION_CODES.has(code)) return new DbUnavailableError(message);
  // SQLSTATE class 08 is "connection exception"; 57P0x are shutdown/cannot-connect-now.
  if (code && /^[0-9A-Z]{5}$/.test(code)) {
    if (code.startsWith("08") || code.startsWith("57P")) return new DbUnavailableError(message);
    const constraint = (e.constraint_name ?? e.constraint) as string | undefined;
    return new DbError(code, constraint || undefined, message, query);
  }
  return err instanceof Error ? err : new Error(message);
}
