// The operator channel's messages (src/ops/channel.ts serves them, src/ops/client.ts sends them):
// one JSON object per line, each way. A connection opens with "hello" (the schema check) and then
// carries requests one at a time, each answered by one final reply (a backup's bytes come first
// as chunks).
import { DbError } from "../db/index.ts";
import { SchemaMismatchError } from "../db/migrate.ts";
import { ScriptUsageError } from "./psql-script.ts";

export type OpsRequest =
  /** The caller's build's schema version: any other in the database is refused. */
  | { op: "hello"; schema: string }
  /** One sql/ops/ script (`ops/<name>`) with its psql variables. */
  | { op: "script"; file: string; vars: Record<string, string> }
  /** One named query of sql/queries/ (the reads of `ops receipts check`, key rotation). */
  | { op: "query"; name: string; params: unknown[] }
  /** A consistent copy of the embedded database. */
  | { op: "backup" };

export type OpsFailure =
  | { kind: "schema"; found: string; wanted: string; message: string }
  | { kind: "db"; sqlstate: string; constraint?: string; message: string }
  | { kind: "usage"; message: string }
  | { kind: "failed"; message: string };

export type OpsReply = { ok: true; result: unknown } | { ok: false; error: OpsFailure } | { chunk: string };

/** An error as it crosses the channel: the classes the CLI tells apart survive the trip. */
export function toFailure(err: unknown): OpsFailure {
  if (err instanceof SchemaMismatchError) return { kind: "schema", found: err.found, wanted: err.wanted, message: err.message };
  if (err instanceof DbError) return { kind: "db", sqlstate: err.sqlstate, constraint: err.constraint, message: err.message };
  if (err instanceof ScriptUsageError) return { kind: "usage", message: err.message };
  return { kind: "failed", message: err instanceof Error ? err.message : String(err) };
}

export function fromFailure(failure: OpsFailure): Error {
  switch (failure.kind) {
    case "schema":
      return new SchemaMismatchError(failure.found, failure.wanted);
    case "db":
      return new DbError(failure.sqlstate, failure.constraint, failure.message);
    case "usage":
      return new ScriptUsageError(failure.message);
    default:
      return new Error(failure.message);
  }
}

/** Splits a byte stream into lines (JSON messages), in order. */
export function lineReader(onLine: (line: string) => void): (chunk: Uint8Array | string) => void {
  const decoder = new TextDecoder();
  let rest = "";
  return (chunk) => {
    rest += typeof chunk === "string" ? chunk : decoder.decode(chunk, { stream: true });
    let nl: number;
    while ((nl = rest.indexOf("\n")) >= 0) {
      const line = rest.slice(0, nl);
      rest = rest.slice(nl + 1);
      if (line) onLine(line);
    }
  };
}

/** A backup travels in chunks of this many bytes (base64 in a line each). */
export const CHUNK_BYTES = 1 << 20;
