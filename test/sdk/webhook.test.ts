// The SDK's Standard Webhooks verifier (src/sdk/webhook.ts) against the signatures of the
// standardwebhooks package, the specification's reference implementation.
import { describe, expect, test } from "bun:test";
import { Webhook } from "standardwebhooks";
import { verifyWebhook, WebhookVerificationError } from "../../src/sdk/webhook.ts";

const secret = () => "whsec_" + Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64");
const body = JSON.stringify({ type: "approval.requested", timestamp: "2026-07-01T12:00:00.000Z", data: { approval_id: "apv_1", note: "naïve ✓" } });

/** The three headers of a delivery, signed by standardwebhooks. */
function signed(key: string, payload = body, at = new Date(), id = "msg_" + crypto.randomUUID()) {
  return { "webhook-id": id, "webhook-timestamp": String(Math.floor(at.getTime() / 1000)), "webhook-signature": new Webhook(key).sign(id, at, payload) };
}

async function refusal(promise: Promise<unknown>): Promise<string> {
  const err = await promise.then(() => undefined, (e) => e);
  expect(err).toBeInstanceOf(WebhookVerificationError);
  return (err as Error).message;
}

describe("verifyWebhook", () => {
  test("accepts what standardwebhooks signs, from a Headers object or a plain header record, text or bytes", async () => {
    const key = secret();
    const headers = signed(key);
    expect(await verifyWebhook(key, body, headers)).toEqual(JSON.parse(body));
    expect(await verifyWebhook(key, new TextEncoder().encode(body), new Headers(headers))).toEqual(JSON.parse(body));
    // Node's IncomingHttpHeaders keep the names as sent.
    expect(await verifyWebhook(key, body, { "Webhook-Id": headers["webhook-id"], "WEBHOOK-TIMESTAMP": headers["webhook-timestamp"], "webhook-signature": headers["webhook-signature"] })).toEqual(JSON.parse(body));
    // The reference implementation agrees with itself on the same delivery.
    expect(new Webhook(key).verify(body, headers)).toEqual(JSON.parse(body));
  });

  test("a secret without whsec_, several signatures (one of them ours), and several secrets (rotation)", async () => {
    const [key, old] = [secret(), secret()];
    const headers = signed(key);
    expect(await verifyWebhook(key.slice("whsec_".length), body, headers)).toEqual(JSON.parse(body));
    const theirs = signed(old, body, new Date(Number(headers["webhook-timestamp"]) * 1000), headers["webhook-id"])["webhook-signature"];
    const both = { ...headers, "webhook-signature": `v1a,${"A".repeat(86)}== ${theirs} ${headers["webhook-signature"]}` };
    expect(await verifyWebhook(key, body, both)).toEqual(JSON.parse(body));
    expect(await verifyWebhook([old, key], body, headers)).toEqual(JSON.parse(body));
  });

  test("refuses a changed body, id or timestamp, another secret, a missing header", async () => {
    const key = secret();
    const headers = signed(key);
    expect(await refusal(verifyWebhook(key, body.replace("apv_1", "apv_2"), headers))).toBe("No matching signature found");
    expect(await refusal(verifyWebhook(key, body + " ", headers))).toBe("No matching signature found");
    expect(await refusal(verifyWebhook(key, body, { ...headers, "webhook-id": "msg_other" }))).toBe("No matching signature found");
    expect(await refusal(verifyWebhook(key, body, { ...headers, "webhook-timestamp": String(Number(headers["webhook-timestamp"]) - 1) }))).toBe("No matching signature found");
    expect(await refusal(verifyWebhook(secret(), body, headers))).toBe("No matching signature found");
    expect(await refusal(verifyWebhook(key, body, { ...headers, "webhook-signature": headers["webhook-signature"].replace("v1,", "v2,") }))).toBe("No matching signature found");
    for (const name of ["webhook-id", "webhook-timestamp", "webhook-signature"]) {
      const { [name as keyof typeof headers]: _, ...rest } = headers;
      expect(await refusal(verifyWebhook(key, body, rest))).toStartWith("Missing");
    }
  });

  test("refuses a timestamp over five minutes old or ahead, as standardwebhooks does", async () => {
    const key = secret();
    const at = new Date();
    for (const skew of [-301, 301]) {
      const headers = signed(key, body, new Date(at.getTime() + skew * 1000));
      const ours = await refusal(verifyWebhook(key, body, headers, { now: at }));
      expect(ours).toBe(skew < 0 ? "Message timestamp too old" : "Message timestamp too new");
      expect(() => new Webhook(key).verify(body, headers)).toThrow(ours);
    }
    const edge = signed(key, body, new Date(at.getTime() - 299_000));
    expect(await verifyWebhook(key, body, edge, { now: at })).toEqual(JSON.parse(body));
    expect(await refusal(verifyWebhook(key, body, edge, { now: at, toleranceSeconds: 60 }))).toBe("Message timestamp too old");
    expect(await refusal(verifyWebhook(key, body, { ...edge, "webhook-timestamp": "12e8" }, { now: at }))).toStartWith("webhook-timestamp");
  });

  test("a malformed secret is the caller's bug: TypeError", async () => {
    const headers = signed(secret());
    await expect(verifyWebhook("whsec_", body, headers)).rejects.toThrow(TypeError);
    await expect(verifyWebhook("whsec_not base64!", body, headers)).rejects.toThrow(TypeError);
  });
});
