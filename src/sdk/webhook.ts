// Standard Webhooks v1 (standardwebhooks.com), the signatures of warden's webhook deliveries
// (docs/sdk.md): HMAC-SHA256 over `${webhook-id}.${webhook-timestamp}.${body}` under the key that
// the secret after `whsec_` encodes in base64. WebCrypto only, so it runs wherever the SDK does.

/** A delivery's body: `{type, timestamp, data}` (docs/api.md). */
export interface WebhookEvent {
  type: string;
  timestamp: string;
  data: Record<string, unknown>;
}

export class WebhookVerificationError extends Error {
  override name = "WebhookVerificationError";
}

export interface WebhookVerifyOptions {
  /** How far the signed timestamp may be from now, either way, in seconds (default 300, as Standard Webhooks). */
  toleranceSeconds?: number;
  /** The current time (default: the clock). */
  now?: Date;
}

type HeaderBag = Headers | Record<string, string | string[] | undefined>;

const PREFIX = "whsec_";
const utf8 = new TextEncoder();

function header(headers: HeaderBag, name: string): string | undefined {
  if (typeof (headers as Headers).get === "function") return (headers as Headers).get(name) ?? undefined;
  for (const [key, value] of Object.entries(headers as Record<string, string | string[] | undefined>)) {
    if (key.toLowerCase() === name) return Array.isArray(value) ? value.join(" ") : value;
  }
  return undefined;
}

function base64Bytes(text: string): Uint8Array<ArrayBuffer> | undefined {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 !== 0) return undefined;
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

async function hmacKey(secret: string): Promise<CryptoKey> {
  const key = base64Bytes(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret);
  if (!key || key.length === 0) throw new TypeError("a webhook secret is whsec_ followed by base64");
  return crypto.subtle.importKey("raw", key, { name: "HMAC", hash: "SHA-256" }, false, ["verify"]);
}

/**
 * Checks a delivery and answers its parsed body; throws WebhookVerificationError when a header is
 * missing, the timestamp is outside the tolerance, or no `v1` signature matches one of `secrets`
 * (pass the old secret too while a rotated one is in its overlap). `body` must be the raw bytes or
 * text received, before any JSON parsing.
 */
export async function verifyWebhook<T = WebhookEvent>(secrets: string | string[], body: string | Uint8Array, headers: HeaderBag, options: WebhookVerifyOptions = {}): Promise<T> {
  const id = header(headers, "webhook-id");
  const timestamp = header(headers, "webhook-timestamp");
  const signatures = header(headers, "webhook-signature");
  if (!id || !timestamp || !signatures) throw new WebhookVerificationError("Missing webhook-id, webhook-timestamp or webhook-signature");
  if (!/^\d{1,15}$/.test(timestamp)) throw new WebhookVerificationError("webhook-timestamp is not a number of seconds");
  const now = Math.floor((options.now?.getTime() ?? Date.now()) / 1000);
  const tolerance = options.toleranceSeconds ?? 300;
  if (now - Number(timestamp) > tolerance) throw new WebhookVerificationError("Message timestamp too old");
  if (Number(timestamp) - now > tolerance) throw new WebhookVerificationError("Message timestamp too new");

  const bytes = typeof body === "string" ? utf8.encode(body) : body;
  const prefix = utf8.encode(`${id}.${timestamp}.`);
  const signed = new Uint8Array(prefix.length + bytes.length);
  signed.set(prefix);
  signed.set(bytes, prefix.length);

  const keys = await Promise.all((Array.isArray(secrets) ? secrets : [secrets]).map(hmacKey));
  // Space-separated `version,base64` entries; versions other than v1 (v1a: Ed25519) are not ours.
  const candidates = signatures.split(" ").flatMap((entry) => {
    const [version, signature] = entry.split(",", 2);
    const decoded = version === "v1" && signature ? base64Bytes(signature) : undefined;
    return decoded ? [decoded] : [];
  });
  for (const key of keys) {
    for (const candidate of candidates) {
      // WebCrypto compares in constant time.
      if (await crypto.subtle.verify("HMAC", key, candidate, signed)) return parse<T>(bytes);
    }
  }
  throw new WebhookVerificationError("No matching signature found");
}

function parse<T>(bytes: Uint8Array): T {
  try {
    return JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes)) as T;
  } catch {
    throw new WebhookVerificationError("The signature matches, but the body is not JSON");
  }
}
