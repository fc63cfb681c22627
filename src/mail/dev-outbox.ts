// The development outbox (no SMTP_URL): beside each DATA_DIR/outbox/<id>.eml, whose
// quoted-printable text breaks a link across lines, a <id>.txt a person can read and copy a link
// from. The development mailbox (GET /dev/mailbox, ./routes.ts) reads these files back.
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";

export interface DevMessage {
  /** The outbox row's id, as in the file names. */
  id: number;
  kind: string;
  to: string;
  subject: string;
  /** When the file was written (ISO 8601). */
  date: string;
  text: string;
  /** Every link in the text, each whole, in order. */
  links: string[];
}

const HEADERS = ["To", "Subject", "Date", "Kind"] as const;

export function linksIn(text: string): string[] {
  return [...text.matchAll(/\bhttps?:\/\/[^\s<>"]+/g)].map((m) => m[0]);
}

/** The .txt file: a few header lines, a blank line, then the plain-text part as it was sent. */
export function devMailText(mail: { kind: string; to: string; subject: string; text: string }, date: Date): string {
  const oneLine = (value: string) => value.replace(/[\r\n]+/g, " ");
  const values = { To: mail.to, Subject: mail.subject, Date: date.toISOString(), Kind: mail.kind };
  return `${HEADERS.map((name) => `${name}: ${oneLine(values[name])}`).join("\n")}\n\n${mail.text}`;
}

export function parseDevMail(id: number, file: string): DevMessage | undefined {
  const split = file.indexOf("\n\n");
  if (split < 0) return undefined;
  const fields = new Map<string, string>();
  for (const line of file.slice(0, split).split("\n")) {
    const colon = line.indexOf(": ");
    if (colon > 0) fields.set(line.slice(0, colon), line.slice(colon + 2));
  }
  const [to, subject, date, kind] = HEADERS.map((name) => fields.get(name));
  if (to === undefined || subject === undefined || date === undefined || kind === undefined) return undefined;
  const text = file.slice(split + 2);
  return { id, kind, to, subject, date, text, links: linksIn(text) };
}

/**
 * The messages in `dir` that `keep` accepts, newest first: at most `limit`, looked for among the
 * newest `scan` files (a development outbox only grows).
 */
export async function readDevOutbox(dir: string, keep: (message: DevMessage) => boolean, limit = 20, scan = 200): Promise<DevMessage[]> {
  const names = await readdir(dir).catch((err: NodeJS.ErrnoException) => {
    if (err.code === "ENOENT") return [] as string[];
    throw err;
  });
  const ids = names
    .map((name) => /^(\d+)\.txt$/.exec(name)?.[1])
    .filter((id): id is string => id !== undefined)
    .map(Number)
    .sort((a, b) => b - a)
    .slice(0, scan);
  const found: DevMessage[] = [];
  for (const id of ids) {
    const file = await readFile(join(dir, `${id}.txt`), "utf8").catch(() => undefined);
    const message = file === undefined ? undefined : parseDevMail(id, file);
    if (message && keep(message)) found.push(message);
    if (found.length === limit) break;
  }
  return found;
}
