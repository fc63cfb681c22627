// The service's receipt signing key, kept in the database so it survives restarts and is shared
// by every instance. Rotation (warden ops signing-key rotate) retires the active key; retired
// public keys stay in the JWKS, so every receipt ever signed stays verifiable. Revocation
// (warden ops signing-key revoke) retires a key and publishes when it was compromised.
import type { Db, Queryable } from "../db/index.ts";
import { sha256BytesSync, signBytesSync, signCanonicalPooled, signCanonicalSync, syncSigner, type SyncSigner } from "../crypto/sync.ts";
import { ThreadLoad } from "../crypto/thread-load.ts";
import { ed25519PublicKey, noteKeyIdInput, noteVerifierKey, signedNote } from "./note.ts";
import { generateSigningKey } from "../crypto/signature.ts";

// Another instance or an operator may rotate or revoke the key; pick up the change within this long.
const RELOAD_AFTER_MS = 60_000;

export class ReceiptSigner {
  private active?: SyncSigner;
  private activePublic?: Uint8Array;
  private loadedAt = 0;
  private loading?: Promise<void>;
  /** Signatures go to the thread pool while this thread is saturated: +33% simulate on two cores. */
  private readonly thread = new ThreadLoad();

  constructor(private readonly db: Db) {}

  /** Loads the active key, creating one if this database has none (a new one, or after a revocation). */
  static async open(db: Db): Promise<ReceiptSigner> {
    const signer = new ReceiptSigner(db);
    await signer.load();
    return signer;
  }

  private async load(): Promise<void> {
    const row = await activeKey(this.db);
    if (this.active?.kid !== row.kid) {
      this.active = syncSigner(row.kid, row.private_jwk as JsonWebKey);
      this.activePublic = ed25519PublicKey(row.public_jwk as JsonWebKey);
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
  static async rotate(db: Queryable): Promise<string> {
    const key = await generateSigningKey();
    await db.query("receipts/signing_key_rotate", [key.kid, key.publicJwk, key.privateJwk]);
    return key.kid;
  }
}

/** The active key's row, made first where there is none (a new database, or after a revocation). */
export async function activeKey(db: Queryable) {
  let rows = await db.query("receipts/signing_keys");
  if (!rows.some((r) => r.status === "active")) {
    const key = await generateSigningKey();
    // Two instances may race here; the partial unique index keeps exactly one.
    await db.query("receipts/signing_key_create_first", [key.kid, key.publicJwk, key.privateJwk]);
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
