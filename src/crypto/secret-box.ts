// Secrets the service must read back (TOTP secrets, the receipt signing keys) are stored sealed:
// AES-256-GCM under a key derived (HKDF-SHA-256) from the service secret, one key per purpose.
// With JWT_SECRET set, a copy of the database or its backups alone yields none of them; without
// it the service secret sits in the same database and sealing only keeps secrets out of casual
// reads (docs/security.md, "Secrets at rest").
const utf8 = (text: string) => new TextEncoder().encode(text);

/** `v1.<iv>.<ciphertext and tag>`, base64url: what a sealed value looks like (CHECKs in the schema hold to it). */
export const SEALED_FORMAT = /^v1\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]+$/;

export class SecretBox {
  private constructor(private readonly key: CryptoKey) {}

  /** The box of one purpose (its HKDF info, for example "warden totp secret v1"). */
  static async derive(serviceSecret: string, purpose: string): Promise<SecretBox> {
    const material = await crypto.subtle.importKey("raw", utf8(serviceSecret), "HKDF", false, ["deriveKey"]);
    const key = await crypto.subtle.deriveKey(
      { name: "HKDF", hash: "SHA-256", salt: new Uint8Array(0), info: utf8(purpose) },
      material,
      { name: "AES-GCM", length: 256 },
      false,
      ["encrypt", "decrypt"],
    );
    return new SecretBox(key);
  }

  /** `context` (the row it belongs to: a tenant id, a kid) is authenticated data: a sealed value moved to another row does not open. */
  async seal(secret: string, context: string): Promise<string> {
    const iv = crypto.getRandomValues(new Uint8Array(12));
    const sealed = await crypto.subtle.encrypt({ name: "AES-GCM", iv, additionalData: utf8(context) }, this.key, utf8(secret));
    return `v1.${Buffer.from(iv).toString("base64url")}.${Buffer.from(sealed).toString("base64url")}`;
  }

  /** Throws when the value was sealed under another service secret, for another context, or changed. */
  async open(sealed: string, context: string): Promise<string> {
    if (!SEALED_FORMAT.test(sealed)) throw new Error("unknown sealed secret format");
    const [, iv, data] = sealed.split(".");
    const plain = await crypto.subtle.decrypt({ name: "AES-GCM", iv: Buffer.from(iv!, "base64url"), additionalData: utf8(context) }, this.key, Buffer.from(data!, "base64url"));
    return new TextDecoder().decode(plain);
  }
}
