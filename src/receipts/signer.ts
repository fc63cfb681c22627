// The service's receipt signing key, kept in the database so it survives restarts and is shared
// by every instance, its private half sealed under the service secret (a SecretBox, context: the
// kid). Rotation (warden ops signing-key rotate) retires the active key; retired public keys stay
// in the JWKS, so every receipt ever signed stays verifiable. Revocation (warden ops signing-key
// revoke) retires a key and publishes when it was compromised.
import type { Db, Queryable } from "../db/index.ts";
import { sha256BytesSync, signBytesSync, signCanonicalPooled, signCanonicalSync, syncSigner, type SyncSigner } from "../crypto/sync.ts";
import { ThreadLoad } from "../crypto/thread-load.ts";
import { SecretBox } from "../crypto/secret-box.ts";
import type { Logger } from "../log.ts";
import { ed25519PublicKey, noteKeyIdInput, noteVerifierKey, signedNote } from "./note.ts";
import { generateSigningKey } from "../crypto/signature.ts";

/** The purpose (HKDF info) of the SecretBox that seals signing keys. */
const SIGNING_KEY_PURPOSE = "warden receipt signing key v1";

/** The box that seals and opens signing keys under this service secret. */
export const signingKeyBox = (serviceSecret: string, previous?: string): Promise<SecretBox> => SecretBox.derive(serviceSecret, SIGNING_KEY_PURPOSE, previous);

// Another instance or an operator may rotate or revoke the key; pick up the change within this long.
const RELOAD_AFTER_MS = 60_000;

export class ReceiptSigner {
  private active?: SyncSigner;
  private activePublic?: Uint8Array;
  private loadedAt = 0;
  private loading?: Promise<void>;
  /** Signatures go to the thread pool while this thread is saturated: +33% simulate on two cores. */
  private readonly thread = new ThreadLoad();

  constructor(
    private readonly db: Db,
    private readonly box: SecretBox,
    private readonly log: Logger,
  ) {}

  /**
   * Loads the active key, creating one if this database has none (a new one, or after a
   * revocation). An active key sealed under another service secret, or under JWT_SECRET_PREVIOUS
   * (JWT_SECRET changed), is retired for a new one: its public key stays published, so what it
   * signed still verifies, and a key the old secret opens signs nothing more.
   */
  static async open(db: Db, box: SecretBox, log: Logger): Promise<ReceiptSigner> {
    const signer = new ReceiptSigner(db, box, log);
    const row = await activeKey(db, box);
    const under = await box.sealedUnder(row.private_sealed, row.kid);
    if (under !== "current") {
      const kid = await ReceiptSigner.rotate(db, box);
      log.warn("signing_key_replaced", { retired_kid: row.kid, kid, reason: `the active key is sealed under ${under === "previous" ? "JWT_SECRET_PREVIOUS" : "another service secret"}` });
    }
    await signer.load();
    return signer;
  }

  private async load(): Promise<void> {
    const row = await activeKey(this.db, this.box);
    if (this.active?.kid !== row.kid) {
      try {
        this.active = syncSigner(row.kid, JSON.parse(await this.box.open(row.private_sealed, row.kid)) as JsonWebKey);
        this.activePublic = ed25519PublicKey(row.public_jwk as JsonWebKey);
      } catch (err) {
        // Made by an instance or operator under another JWT_SECRET: keep the key held (a restart replaces it).
        if (!this.active) throw err;
        this.log.error("signing_key_unreadable", { kid: row.kid, signing_with: this.active.kid, reason: "sealed under another service secret" });
      }
    }
    this.loadedAt = Date.now();
  }

  get kid(): string {
    return this.active!.kid;
  }

  /** A compact EdDSA JWS over the JCS form of value. */
  async sign(value: unknown): Promise<string> {
    const key = await this.current();
    return this.thread.saturated() ? signCanonicalPooled(value, key) : signCanonicalSync(value, key);
  }

  /** Reloads the key now when the last load is stale: call it before a transaction that will signHeld(). */
  async ready(): Promise<void> {
    await this.current();
  }

  /**
   * sign() with the key held now, reading nothing from the database: for a caller inside a
   * transaction (on the embedded database a read of its own would wait for that transaction's end).
   */
  signHeld(value: unknown): Promise<string> {
    const key = this.active!;
    return this.thread.saturated() ? signCanonicalPooled(value, key) : Promise.resolve(this.signNow(value));
  }

  /**
   * signHeld() on this thread, at once: for a caller whose next step must follow the decision
   * before any other request's (call ready() first).
   */
  signNow(value: unknown): string {
    return signCanonicalSync(value, this.active!);
  }

  /** `text` as a signed note (c2sp.org/signed-note) under the key name `name`, and the verifier key that checks it. */
  async signNote(text: string, name: string): Promise<{ note: string; verifierKey: string }> {
    const key = await this.current();
    const publicKey = this.activePublic!;
    const keyId = sha256BytesSync(noteKeyIdInput(name, publicKey)).subarray(0, 4);
    const signature = signBytesSync(new TextEncoder().encode(text), key);
    return { note: signedNote(text, name, keyId, signature), verifierKey: noteVerifierKey(name, keyId, publicKey) };
  }

  /** The active key, reloaded first when the last load is older than RELOAD_AFTER_MS. */
  private async current(): Promise<SyncSigner> {
    if (Date.now() - this.loadedAt > RELOAD_AFTER_MS) await this.reload();
    return this.active!;
  }

  /** Every public key, active and retired, as a JWKS. */
  jwks(): Promise<{ keys: JsonWebKey[] }> {
    return publishedKeys(this.db);
  }

  /** Loads the active key now rather than at the next reload (after an operator's change). */
  reload(): Promise<void> {
    this.loading ??= this.load().finally(() => (this.loading = undefined));
    return this.loading;
  }

  /** Makes a new active key; the old one is retired but stays published. */
  static async rotate(db: Queryable, box: SecretBox): Promise<string> {
    const key = await newSealedKey(box);
    await db.query("receipts/signing_key_rotate", key);
    return key[0];
  }
}

/** A new key as the database stores it: kid, public JWK, the private JWK sealed (context: the kid). */
async function newSealedKey(box: SecretBox): Promise<[kid: string, publicJwk: JsonWebKey, privateSealed: string]> {
  const key = await generateSigningKey();
  return [key.kid, key.publicJwk, await box.seal(JSON.stringify(key.privateJwk), key.kid)];
}

type SigningKeyRow = Awaited<ReturnType<typeof activeKey>>;

/** Whether this box opens the key (false: sealed under another service secret). */
export const opens = async (box: SecretBox, row: SigningKeyRow): Promise<boolean> => (await box.sealedUnder(row.private_sealed, row.kid)) !== null;

/** The active key's row, made first where there is none (a new database, or after a revocation). */
export async function activeKey(db: Queryable, box: SecretBox) {
  let rows = await db.query("receipts/signing_keys");
  if (!rows.some((r) => r.status === "active")) {
    // Two instances may race here; the partial unique index keeps exactly one.
    await db.query("receipts/signing_key_create_first", await newSealedKey(box));
    rows = await db.query("receipts/signing_keys");
  }
  return rows.find((r) => r.status === "active")!;
}

/**
 * The JWKS as published: each public key, and on a revoked one the member `compromised_since`
 * (ISO time), from which on verifiers refuse its signatures.
 */
export async function publishedKeys(db: Queryable): Promise<{ keys: JsonWebKey[] }> {
  const rows = await db.query("receipts/signing_keys");
  return {
    keys: rows.map((r) => {
      const jwk = r.public_jwk as JsonWebKey;
      return r.compromised_since === null ? jwk : ({ ...jwk, compromised_since: r.compromised_since } as JsonWebKey);
    }),
  };
}
