// Signing secrets and signatures of Standard Webhooks (standardwebhooks.com, "Signature scheme"):
// a secret is `whsec_` + base64 of 32 random bytes; the signature of a delivery is HMAC-SHA256,
// keyed with the secret's bytes, of `${webhook-id}.${webhook-timestamp}.${body}`, sent as
// `v1,<base64>`. While a rotated secret still signs, the header carries one signature per
// secret, separated by a space, and a receiver that knows either accepts it.
import { createHmac } from "node:crypto";

export const SECRET_PREFIX = "whsec_";

/** A new signing secret, shown to the tenant once. */
export function newWebhookSecret(): string {
  return SECRET_PREFIX + Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64");
}

/** Whether a text is a secret of ours (whsec_ and base64 of 32 bytes). */
export function isWebhookSecret(text: string): boolean {
  return /^whsec_[A-Za-z0-9+/]{43}=$/.test(text);
}

/** The `webhook-signature` header for one attempt: `v1,<base64>` for each secret, space-separated. */
export function signatureHeader(msgId: string, timestamp: number, body: string, secrets: readonly string[]): string {
  return secrets
    .map((secret) => {
      const key = Buffer.from(secret.slice(SECRET_PREFIX.length), "base64");
      return `v1,${createHmac("sha256", key).update(`${msgId}.${timestamp}.${body}`).digest("base64")}`;
    })
    .join(" ");
}

/** The headers of one attempt: the id stays the same across retries; the timestamp is the attempt's (seconds). */
export function webhookHeaders(msgId: string, timestamp: number, body: string, secrets: readonly string[]): Record<string, string> {
  return { "webhook-id": msgId, "webhook-timestamp": String(timestamp), "webhook-signature": signatureHeader(msgId, timestamp, body, secrets) };
}
