// Signatures as Standard Webhooks defines them, checked by its own reference library
// (the standardwebhooks package), and the retry schedule of the webhook channel.
import { describe, expect, test } from "bun:test";
import { Webhook, WebhookVerificationError } from "standardwebhooks";
import { retryDelaySeconds, retrySchedule } from "../../src/outbox/queue.ts";
import { WEBHOOK } from "../../src/webhooks/outbox.ts";
import { isWebhookSecret, newWebhookSecret, signatureHeader, webhookHeaders } from "../../src/webhooks/signature.ts";
import { deliveryBody } from "../../src/webhooks/worker.ts";

const body = deliveryBody("approval.requested", { delivery_id: "dlv_x", timestamp: "2030-01-01T00:00:00.000Z", data: { approval_id: "apv_1", note: "é ✓" } });
const now = () => Math.floor(Date.now() / 1000);

describe("signatures", () => {
  test("a secret is whsec_ and base64 of 32 random bytes", () => {
    const secrets = new Set(Array.from({ length: 50 }, newWebhookSecret));
    expect(secrets.size).toBe(50);
    for (const secret of secrets) {
      expect(isWebhookSecret(secret)).toBe(true);
      expect(Buffer.from(secret.slice(6), "base64")).toHaveLength(32);
    }
  });

  test("the reference library verifies our headers, and the same signature as it computes", () => {
    const secret = newWebhookSecret();
    const ts = now();
    const headers = webhookHeaders("dlv_abc", ts, body, [secret]);
    const reference = new Webhook(secret);
    expect(reference.verify(body, headers)).toEqual(JSON.parse(body));
    expect(headers["webhook-signature"]).toBe(reference.sign("dlv_abc", new Date(ts * 1000), body));
  });

  test("another secret, another body, another id or an old timestamp does not verify", () => {
    const secret = newWebhookSecret();
    const headers = webhookHeaders("dlv_abc", now(), body, [secret]);
    expect(() => new Webhook(newWebhookSecret()).verify(body, headers)).toThrow(WebhookVerificationError);
    expect(() => new Webhook(secret).verify(body.replace("apv_1", "apv_2"), headers)).toThrow(WebhookVerificationError);
    expect(() => new Webhook(secret).verify(body, { ...headers, "webhook-id": "dlv_abd" })).toThrow(WebhookVerificationError);
    const old = webhookHeaders("dlv_abc", now() - 3600, body, [secret]);
    expect(() => new Webhook(secret).verify(body, old)).toThrow(WebhookVerificationError);
  });

  test("during a rotation's overlap the header carries both signatures, and either secret verifies it", () => {
    const [fresh, old] = [newWebhookSecret(), newWebhookSecret()];
    const headers = webhookHeaders("dlv_abc", now(), body, [fresh, old]);
    const parts = headers["webhook-signature"].split(" ");
    expect(parts).toHaveLength(2);
    expect(parts.every((p) => /^v1,[A-Za-z0-9+/]{43}=$/.test(p))).toBe(true);
    expect(parts[0]).toBe(signatureHeader("dlv_abc", Number(headers["webhook-timestamp"]), body, [fresh]));
    for (const secret of [fresh, old]) expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => new Webhook(newWebhookSecret()).verify(body, headers)).toThrow(WebhookVerificationError);
  });

  test("the body is {type, timestamp, data}, the same text for every attempt", () => {
    expect(Object.keys(JSON.parse(body))).toEqual(["type", "timestamp", "data"]);
    expect(deliveryBody("approval.requested", { delivery_id: "dlv_x", timestamp: "2030-01-01T00:00:00.000Z", data: { approval_id: "apv_1", note: "é ✓" } })).toBe(body);
  });
});

describe("the webhook channel's retries", () => {
  test("1 minute, doubling to 8 hours, then every 8 hours: 18 attempts over about three days", () => {
    const schedule = retrySchedule(WEBHOOK.retry);
    expect(schedule).toEqual([60, 120, 240, 480, 960, 1920, 3840, 7680, 15360, 28800, 28800, 28800, 28800, 28800, 28800, 28800, 28800]);
    const total = schedule.reduce((a, b) => a + b, 0);
    expect(total / 3600).toBeCloseTo(72.52, 1);
    expect(total).toBeGreaterThan(3 * 86400 - 3600);
    expect(total).toBeLessThan(3.5 * 86400);
  });

  test("the delay doubles per attempt from the base and stops at the cap", () => {
    const retry = { maxAttempts: 5, baseSeconds: 30, capSeconds: 100 };
    expect([0, 1, 2, 3, 4, 50].map((n) => retryDelaySeconds(retry, n))).toEqual([30, 30, 60, 100, 100, 100]);
    expect(retrySchedule(retry)).toEqual([30, 60, 100, 100]);
  });
});
