// The service's receipt signing key, kept in the database so it survives restarts and is shared
// by every instance. Rotation (warden ops signing-key rotate) retires the active key; retired
// public keys stay in the JWKS, so every receipt ever signed stays verifiable.
import type { Db, Queryable } from "../db/index.ts";
import { signBytesSync, syncSigner, signCanonicalSync, type SyncSigner } from "../crypto/sync.ts";
import { ed25519PublicKey } from "./note.ts";
import { generateSigningKey } from "../crypto/signature.ts";

// Another instance may rotate the key; pick up the new one within this long.
const RELOAD_AFTER_MS = 60_000;

export class ReceiptSigner {
  private active?: SyncSigner;
  private activePublic?: Uint8Array;
  private loadedAt = 0;
  private loading?: Promise<void>;

  constructor(private readonly db: Db) {}

  /** Loads the active key, creating the first one if this database has none. */
  static async open(db: Db): Promise<ReceiptSigner> {
    const signer = new ReceiptSigner(db);
    await signer.load();
    return signer;
  }

  private async load(): Promise<void> {
    let rows = await this.db.query("receipts/signing_keys");
    if (!rows.some((r) => r.status === "active")) {
      const key = await generateSigningKey();
      // Two instances may race here; the partial unique index keeps exactly one.
      await this.db.query("receipts/signing_key_create_first", [key.kid, key.publicJwk, key.privateJwk]);
      rows = await this.db.query("receipts/signing_keys");
    }
    const row = rows.find((r) => r.status === "active")!;
    if (this.active?.kid !== row.kid) {
      this.active = syncSigner(row.kid, row.private_jwk as JsonWebKey);
      this.activePublic = ed25519PublicKey(row.public_jwk as JsonWebKey);
    }
    this.loadedAt = Date.now();
  }

  get kid(): string {
    return this.active!.kid;
  }

  /** The reload due after RELOAD_AFTER_MS, one at a time; undefined while the key is fresh (the hot path awaits nothing). */
  private stale(): Promise<void> | undefined {
    if (Date.now() - this.loadedAt <= RELOAD_AFTER_MS) return undefined;
    return (this.loading ??= this.load().finally(() => (this.loading = undefined)));
  }

  /** A compact EdDSA JWS over the JCS form of value. */
  async sign(value: unknown): Promise<string> {
    const reload = this.stale();
    if (reload) await reload;
    return signCanonicalSync(value, this.active!);
  }

  /** A plain Ed25519 signature of bytes (a signed note's text) with the raw public key that checks it. */
  async signRaw(bytes: Uint8Array): Promise<{ signature: Uint8Array; publicKey: Uint8Array }> {
    const reload = this.stale();
    if (reload) await reload;
    return { signature: signBytesSync(bytes, this.active!), publicKey: this.activePublic! };
  }

  /** Every public key, active and retired, as a JWKS. */
  async jwks(): Promise<{ keys: JsonWebKey[] }> {
    const rows = await this.db.query("receipts/signing_keys");
    return { keys: rows.map((r) => r.public_jwk as JsonWebKey) };
  }

  /** Makes a new active key; the old one is retired but stays published. */
  static async rotate(db: Queryable): Promise<string> {
    const key = await generateSigningKey();
    await db.query("receipts/signing_key_rotate", [key.kid, key.publicJwk, key.privateJwk]);
    return key.kid;
  }
}
