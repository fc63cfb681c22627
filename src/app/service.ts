// Builds the running service from configuration: database, migrations, keys, the app.
import { hashPassword } from "../accounts/passwords.ts";
import { Sessions } from "../accounts/sessions.ts";
import type { Config } from "../config.ts";
import { openDb, type Db } from "../db/index.ts";
import { migrate } from "../db/migrate.ts";
import { randomBase62 } from "../ids.ts";
import { createLogger, type Logger } from "../log.ts";
import { ReceiptSigner } from "../receipts/signer.ts";
import { ReceiptAppender } from "../receipts/append.ts";
import { KeyAuthenticator } from "../keys/authenticate.ts";
import { PolicyVersions } from "../policies/store.ts";
import { PresetOutcomes } from "../simulation/simulate.ts";
import { createTransport } from "../mail/transport.ts";
import { startMailer } from "../mail/worker.ts";
import { startIdempotencySweeper } from "../http/idempotency.ts";
import { createApp, type App } from "./app.ts";
import type { Deps } from "./deps.ts";
import pkg from "../../package.json" with { type: "json" };

export const VERSION: string = pkg.version;

/** How often stored Idempotency-Key responses past their 24 hours are deleted. */
const IDEMPOTENCY_SWEEP_MS = 10 * 60_000;

export interface Service extends App {
  deps: Deps;
  close(): Promise<void>;
}

/** Opens (or takes) the database, applies migrations and wires the app. */
export async function createService(config: Config, opts: { db?: Db; log?: Logger; now?: () => Date } = {}): Promise<Service> {
  const log = opts.log ?? createLogger(config.logLevel);
  const db = opts.db ?? (await openDb({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: config.databasePoolSize }));
  const applied = await migrate(db);
  if (applied.length) log.info("migrations_applied", { versions: applied });
  const dummyPasswordHash = hashPassword(randomBase62(24), config.bcryptCost);
  const [sessions, signer] = await Promise.all([Sessions.open(db, config.jwtSecret), ReceiptSigner.open(db)]);
  const mail = startMailer({ db, log, transport: createTransport(config), ctx: { publicUrl: config.publicUrl }, pollMs: config.mailPollMs });
  const sweeper = startIdempotencySweeper({ db, log }, IDEMPOTENCY_SWEEP_MS);
  const now = opts.now ?? (() => new Date());
  const deps: Deps = {
    config,
    db,
    log,
    sessions,
    keys: new KeyAuthenticator(db),
    policies: new PolicyVersions(db),
    presetOutcomes: new PresetOutcomes(),
    signer,
    receipts: new ReceiptAppender(db, signer, now),
    dummyPasswordHash,
    version: VERSION,
    now,
    mail,
  };
  const app = createApp(deps);
  const close = async () => {
    // The mail worker first: it finishes its batch while the database is still open.
    await Promise.all([mail.stop(), sweeper.stop()]);
    if (!opts.db) await db.close();
  };
  return { ...app, deps, close };
}
