// `warden entities import FILE` (README, Command line): a tenant's entities from a file, written
// with PUT /customer/entities (docs/api.md, "Entities") with WARDEN_URL and WARDEN_TOKEN (a session).
import { readFile } from "node:fs/promises";
import { parseArgs } from "node:util";
import { readStdin } from "../runtime.ts";
import { callService } from "./client.ts";
import { callerPath, CliError } from "./inputs.ts";
import type { UsageLine } from "./usage.ts";

export const ENTITIES_LINES: UsageLine[] = [
  {
    synopsis: "entities import FILE",
    summary:
      "write the entities of FILE (- for stdin): JSON {entities: [...]}, a JSON array, or JSON lines of one entity each; sent in calls of at most 1,000 (and 60 KiB), each all or nothing; prints the counts (with WARDEN_TOKEN)",
  },
];

/** Bad usage: exit 2 with the message and the usage. */
export class EntitiesUsageError extends Error {}

/** Most entities, and most bytes of JSON, one call carries (the service takes 1,000 and 64 KiB). */
const PER_CALL = 1000;
const CALL_BYTES = 60 * 1024;

/** The entities a file holds, in order: JSON {entities}, a JSON array, or JSON lines. */
export function entitiesOf(text: string, name: string): unknown[] {
  if (text.trim() === "") throw new CliError(`${name} is empty`, 2);
  let whole: unknown;
  try {
    whole = JSON.parse(text);
  } catch {
    whole = undefined;
  }
  if (Array.isArray(whole)) return whole;
  if (whole !== null && typeof whole === "object") {
    const entities = (whole as { entities?: unknown }).entities;
    if (Array.isArray(entities) && Object.keys(whole).length === 1) return entities;
    // One JSON line holding one entity is a file of JSON lines too.
    if (!("entities" in whole)) return [whole];
    throw new CliError(`${name}: an object must be {"entities": [...]} and nothing else`, 2);
  }
  const out: unknown[] = [];
  for (const [i, line] of text.split("\n").entries()) {
    if (line.trim() === "") continue;
    try {
      out.push(JSON.parse(line));
    } catch (err) {
      throw new CliError(`${name}:${i + 1}: not JSON (${(err as Error).message}); the file is neither JSON nor JSON lines`, 2);
    }
  }
  return out;
}

/** The entities in calls of at most PER_CALL entities and CALL_BYTES of body, in order. */
export function batchesOf(entities: unknown[]): unknown[][] {
  const batches: unknown[][] = [];
  let batch: unknown[] = [];
  let bytes = 0;
  for (const entity of entities) {
    const size = Buffer.byteLength(JSON.stringify(entity)) + 1;
    if (batch.length > 0 && (batch.length === PER_CALL || bytes + size > CALL_BYTES)) {
      batches.push(batch);
      batch = [];
      bytes = 0;
    }
    batch.push(entity);
    bytes += size;
  }
  if (batch.length > 0) batches.push(batch);
  return batches;
}

export async function runEntities(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  const { positionals } = parseArgs({ args: rest, options: {}, strict: true, allowPositionals: true });
  if (sub !== "import") throw new EntitiesUsageError(sub === undefined ? "entities needs a command: import" : `unknown entities command: ${sub}`);
  if (positionals.length !== 1) throw new EntitiesUsageError("entities import needs one FILE");
  const file = positionals[0]!;
  let text: string;
  try {
    text = file === "-" ? await readStdin() : await readFile(callerPath(file), "utf8");
  } catch (err) {
    throw new CliError(`${file}: cannot read it (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`, 2);
  }
  const batches = batchesOf(entitiesOf(text, file === "-" ? "stdin" : file));
  let upserted = 0;
  let version: unknown = null;
  for (const [i, batch] of batches.entries()) {
    try {
      const answer = await callService("PUT", "/customer/entities", { auth: "token", body: { entities: batch } });
      upserted += Number(answer.upserted);
      version = answer.version;
    } catch (err) {
      // What went in before stays: say how far the import got, and where the refused call began.
      if (err instanceof CliError) {
        const done = batches.slice(0, i).reduce((n, b) => n + b.length, 0);
        throw new CliError(`${err.message} (${upserted} entities written in ${i} calls before it; the refused call began at entity ${done} of the file)`, err.exitCode);
      }
      throw err;
    }
  }
  console.log(JSON.stringify({ ok: true, upserted, calls: batches.length, version }, null, 2));
  return 0;
}
