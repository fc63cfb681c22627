// Secrets the service must read back (TOTP secrets, the receipt signing keys) are stored sealed:
// AES-256-GCM under a key derived (HKDF-SHA-256) from the service secret, one key per purpose.
// With JWT_SECRET set, a copy of the database or its backups alone yields none of them; without
// it the service secret sits in the same database and sealing only keeps secrets out of casual
// reads (docs/security.md, "Secrets at rest").
const utf8 = (text: string) => new TextEncoder().encode(text);

/** `v1.<iv>.<ciphertext and tag>`, base64url: what a sealed value looks like (CHECKs in the schema hold to it). */
export const SEALED_FORMAT = /^v1\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]+$/;

export class SecretBox {
  /** The current key first; then the previous service secret's, which only opens. */
  private constructor(private readonly keys: CryptoKey[]) {}

  /** The box of one purpose (its HKDF info, for example "warden totp secret v1"); `previous`: JWT_SECRET_PREVIOUS. */
  static async derive(serviceSecret: string, purpose: string, previous?: string): Promise<SecretBox> {
    const derive = async (secret: string) => {
      const material = await crypto.subtle.importKey("raw", utf8(secret), "HKDF", false, ["deriveKey"]);
      return crypto.subtle.deriveKey({ name: "HKDF", hash: "SHA-256", salt: new Uint8Array(0), info: utf8(purpose) }, material, { name: "AES-GCM", length: 256 }, false, ["encrypt", "decrypt"]);
    };
    return new SecretBox(await Promise.all([serviceSecret, ...(previous ? [previous] : [])].map(derive)));
  }

  /** `context` (the row it belongs to: a tenant id, a kid) is authenticated data: a sealed value moved to another row does not open. */
  async seal(secret: string, context: string): Promise<string> {
    const iv = crypto.getRandomValues(new Uint8Array(12));
    const sealed = await crypto.subtle.encrypt({ name: "AES-GCM", iv, additionalData: utf8(context) }, this.keys[0]!, utf8(secret));
    return `v1.${Buffer.from(iv).toString("base64url")}.${Buffer.from(sealed).toString("base64url")}`;
  }

  /** Throws when the value was sealed under another service secret, for another context, or changed. */
  async open(sealed: string, context: string): Promise<string> {
    const opened = await this.unseal(sealed, context);
    if (!opened) throw new Error("the sealed secret does not open under this service secret");
    return opened.secret;
  }

  /** Which of the box's secrets the value was sealed under; null: neither (another secret, another context, changed). */
  async sealedUnder(sealed: string, context: string): Promise<"current" | "previous" | null> {
    return (await this.unseal(sealed, context))?.under ?? null;
  }

  /** The secret and which of the box's secrets sealed it; null: neither opens it. */
  async unseal(sealed: string, context: string): Promise<{ secret: string; under: "current" | "previous" } | null> {
    if (!SEALED_FORMAT.test(sealed)) return null;
    const [, iv, data] = sealed.split(".");
    for (const [key, cryptoKey] of this.keys.entries()) {
      try {
        const plain = await crypto.subtle.decrypt({ name: "AES-GCM", iv: Buffer.from(iv!, "base64url"), additionalData: utf8(context) }, cryptoKey, Buffer.from(data!, "base64url"));
        return { secret: new TextDecoder().decode(plain), under: key === 0 ? "current" : "previous" };
      } catch {
        // Not under this key: try the next.
      }
    }
    return null;
  }
}
