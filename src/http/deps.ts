// Everything a route needs, built once at start (src/http/service.ts) and passed down.
import type { Sessions } from "../accounts/sessions.ts";
import type { Config } from "../config.ts";
import type { Db } from "../db/index.ts";
import type { Logger } from "../log.ts";
import type { Mailer } from "../mail/worker.ts";
import type { ReceiptSigner } from "../receipts/signer.ts";

export interface Deps {
  config: Config;
  db: Db;
  log: Logger;
  sessions: Sessions;
  signer: ReceiptSigner;
  /**
   * A bcrypt hash of a random password, verified against when a login email is unknown. Made in
   * the background at start-up (~250 ms at cost 12, a quarter of the start): a login in the first
   * moments waits for it, so unknown and known emails still cost the same.
   */
  dummyPasswordHash: Promise<string>;
  version: string;
  now: () => Date;
  /** The mail outbox worker: nudge it after committing an enqueue. */
  mail: Mailer;
}
