// Webhook deliveries over the wire, to a real HTTPS receiver on loopback (test/helpers/webhooks.ts):
// signed as Standard Webhooks (checked by its reference library and the SDK's verifier), the rotated secret's overlap,
// 2xx, 410 (disables), a redirect (not followed), a slow receiver (deadline), an endless answer
// (cap), retries with backoff, and the private-address rule at the moment of delivery. Each test
// runs its own delivering service and closes it, so no other worker takes its rows.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Webhook } from "standardwebhooks";
import type { Service } from "../../src/app/service.ts";
import { verifyWebhook } from "../../src/sdk/webhook.ts";
import { WEBHOOK } from "../../src/webhooks/outbox.ts";
import type { Lookup } from "../../src/webhooks/target.ts";
import { bearer } from "../helpers/customer.ts";
import { call, signup, testService } from "../helpers/service.ts";
import { testOne, testQuery } from "../helpers/sql.ts";
import { startReceiver, until, webhookService, withService, type Receiver } from "../helpers/webhooks.ts";

let receiver: Receiver;
beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(() => receiver?.stop());

type Row = Record<string, any>;

const outbox = async (webhookId: string) => testQuery<Row>((await testService()).db, "webhook_outbox", [webhookId]);

/** A tenant with one endpoint at `path` of the receiver (or `url`), made through `service`. */
async function endpoint(service: Service, path: string, opts: { url?: string; events?: string[] } = {}) {
  const user = await signup();
  const reply = await call("POST", "/customer/webhooks", { json: { url: opts.url ?? `${receiver.base}${path}`, events: opts.events ?? ["*"] }, headers: bearer(user.token), service });
  if (reply.status !== 201) throw new Error(`create failed: ${reply.status} ${reply.text}`);
  return { user, hook: reply.body as { webhook_id: string; secret: string } };
}

async function sendTest(service: Service, token: string, webhookId: string): Promise<string> {
  const reply = await call("POST", `/customer/webhooks/${webhookId}/test`, { headers: bearer(token), service });
  expect(reply.status).toBe(202);
  return reply.body.delivery_id;
}

async function deliveries(service: Service, token: string, webhookId: string): Promise<Row[]> {
  return (await call("GET", `/customer/webhooks/${webhookId}/deliveries`, { headers: bearer(token), service })).body.deliveries;
}

/**
 * The endpoint's latest delivery as the log lists it, once its attempt number `attempts` is
 * recorded: delivered or failed, or pending with the attempt's error (the worker writes the
 * status code before it). `done` may ask for more (a later attempt keeps the earlier error).
 */
async function attempted(service: Service, token: string, webhookId: string, attempts = 1, done = (row: Row) => row.status !== "pending" || row.last_error !== null): Promise<Row> {
  return until(`attempt ${attempts} recorded`, async () => {
    const rows = await outbox(webhookId);
    const row = rows[rows.length - 1];
    if (!row || row.attempts < attempts || !done(row)) return undefined;
    return (await deliveries(service, token, webhookId))[0];
  });
}

const headerBag = (headers: Record<string, string>) => ({ "webhook-id": headers["webhook-id"]!, "webhook-timestamp": headers["webhook-timestamp"]!, "webhook-signature": headers["webhook-signature"]! });

describe("a delivery", () => {
  test("a test event arrives signed: the reference library verifies it with the endpoint's secret; 2xx ends it", async () => {
    await withService(await webhookService(), async (service) => {
      const { user, hook } = await endpoint(service, "/ok");
      const deliveryId = await sendTest(service, user.token, hook.webhook_id);
      const [request] = await receiver.waitFor("/ok");
      const received = request!;
      expect(received.headers["webhook-id"]).toBe(deliveryId);
      expect(received.headers["content-type"]).toBe("application/json");
      expect(received.headers["user-agent"]).toMatch(/^warden-webhooks\//);
      expect(received.headers.host).toBe(`127.0.0.1:${receiver.port}`);
      expect(received.headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
      const payload = new Webhook(hook.secret).verify(received.body, headerBag(received.headers));
      expect(payload).toEqual({ type: "webhook.test", timestamp: expect.stringMatching(/Z$/), data: { webhook_id: hook.webhook_id } });
      expect(Object.keys(JSON.parse(received.body))).toEqual(["type", "timestamp", "data"]);
      // The SDK's verifier (src/sdk/webhook.ts) takes the delivery as it arrived too.
      expect(await verifyWebhook<unknown>(hook.secret, received.body, received.headers)).toEqual(payload);
      const done = await attempted(service, user.token, hook.webhook_id);
      expect(done).toEqual({ delivery_id: deliveryId, event: "webhook.test", status: "delivered", attempts: 1, last_status_code: 204, last_error: null, next_attempt_at: null, created_at: expect.any(String) });
      // Delivered: the body left the database with the delivery.
      expect((await outbox(hook.webhook_id))[0]!.data).toEqual({});
    });
  });

  test("an event webhook_emit() queued in a transaction arrives at each subscribed endpoint with its data", async () => {
    await withService(await webhookService(), async (service) => {
      const { user, hook } = await endpoint(service, "/ok?emitted", { events: ["approval.requested"] });
      const data = { approval_id: "apv_x", receipt: { receipt_id: "rcpt_x", payload: { v: 2 } } };
      await testOne((await testService()).db, "webhook_emit", [user.tenantId, "approval.requested", data]);
      service.deps.webhooks.nudge();
      const [request] = await receiver.waitFor("/ok?emitted");
      expect(new Webhook(hook.secret).verify(request!.body, headerBag(request!.headers))).toMatchObject({ type: "approval.requested", data });
    });
  });

  test("after a rotation both secrets sign for 24 hours, then only the new one", async () => {
    await withService(await webhookService(), async (service) => {
      const { user, hook } = await endpoint(service, "/ok?rotated");
      const rotated = await call("POST", `/customer/webhooks/${hook.webhook_id}/rotate-secret`, { headers: bearer(user.token), service });
      expect(rotated.status).toBe(200);
      await sendTest(service, user.token, hook.webhook_id);
      const [during] = await receiver.waitFor("/ok?rotated");
      expect(during!.headers["webhook-signature"]!.split(" ")).toHaveLength(2);
      for (const secret of [rotated.body.secret, hook.secret]) {
        expect(new Webhook(secret).verify(during!.body, headerBag(during!.headers))).toMatchObject({ type: "webhook.test" });
        expect(await verifyWebhook(secret, during!.body, during!.headers)).toMatchObject({ type: "webhook.test" });
      }

      await testQuery((await testService()).db, "webhook_expire_previous", [hook.webhook_id]);
      await sendTest(service, user.token, hook.webhook_id);
      const [, after] = await receiver.waitFor("/ok?rotated", 2);
      expect(after!.headers["webhook-signature"]!.split(" ")).toHaveLength(1);
      expect(new Webhook(rotated.body.secret).verify(after!.body, headerBag(after!.headers))).toMatchObject({ type: "webhook.test" });
      expect(() => new Webhook(hook.secret).verify(after!.body, headerBag(after!.headers))).toThrow();
    });
  });

  test("410 Gone disables the endpoint: the delivery fails at once, the others waiting fail too", async () => {
    await withService(await webhookService(), async (service) => {
      const { user, hook } = await endpoint(service, "/gone");
      // One delivery waits (not due) while the test event is answered 410.
      await testOne((await testService()).db, "webhook_emit", [user.tenantId, "approval.denied", { approval_id: "apv_y" }]);
      const [waiting] = await outbox(hook.webhook_id);
      await (await testService()).db.query("outbox/attempt_failed", [waiting!.id, "held back by the test", false, 10, 3600, 3600]);
      const deliveryId = await sendTest(service, user.token, hook.webhook_id);
      await receiver.waitFor("/gone");
      const done = await until("the endpoint disabled", async () => {
        const list = await deliveries(service, user.token, hook.webhook_id);
        return list.every((d) => d.status === "failed") && list;
      });
      expect(done.find((d) => d.delivery_id === deliveryId)).toMatchObject({ status: "failed", attempts: 1, last_status_code: 410 });
      expect((await call("GET", "/customer/webhooks", { headers: bearer(user.token), service })).body.webhooks[0]).toMatchObject({ status: "disabled" });
      expect((await outbox(hook.webhook_id)).map((r) => r.last_error)).toEqual(["the endpoint was disabled: the endpoint answered 410 Gone", "HTTP 410: the endpoint is gone and now disabled"]);
      expect((await call("POST", `/customer/webhooks/${hook.webhook_id}/test`, { headers: bearer(user.token), service })).status).toBe(409);
      expect(receiver.to("/gone")).toHaveLength(1);
    });
  });

  test("a redirect is not followed: a failed attempt, retried later", async () => {
    await withService(await webhookService(), async (service) => {
      const { user, hook } = await endpoint(service, "/redirect");
      await sendTest(service, user.token, hook.webhook_id);
      await receiver.waitFor("/redirect");
      const done = await attempted(service, user.token, hook.webhook_id);
      expect(done).toMatchObject({ status: "pending", attempts: 1, last_status_code: 302, last_error: "HTTP 302 Found (redirects are not followed)" });
      expect(receiver.to("/ok?redirected")).toEqual([]);
    });
  });

  test("a receiver that does not answer is given up on at the deadline; the attempt is retried later", async () => {
    await withService(await webhookService({ limits: { timeoutMs: 300, maxResponseBytes: 64 * 1024 } }), async (service) => {
      const { user, hook } = await endpoint(service, "/slow");
      await sendTest(service, user.token, hook.webhook_id);
      await receiver.waitFor("/slow");
      const done = await attempted(service, user.token, hook.webhook_id);
      // The receiver still holds its answer (it only answers at stop), and the worker is free again.
      expect(done).toMatchObject({ status: "pending", attempts: 1, last_status_code: null, last_error: "no answer within 0.3 s" });
      const other = await endpoint(service, "/ok?after-slow");
      await sendTest(service, other.user.token, other.hook.webhook_id);
      await receiver.waitFor("/ok?after-slow");
    });
  });

  test("an endless answer is read up to the cap and cut; its 2xx still counts", async () => {
    // A deadline far beyond the test's own wait: only the cap can end this attempt in time.
    await withService(await webhookService({ limits: { timeoutMs: 120_000, maxResponseBytes: 64 * 1024 } }), async (service) => {
      const { user, hook } = await endpoint(service, "/huge");
      await sendTest(service, user.token, hook.webhook_id);
      const done = await attempted(service, user.token, hook.webhook_id);
      expect(done).toMatchObject({ status: "delivered", attempts: 1, last_status_code: 200 });
      await until("the receiver's stream cut", () => receiver.hugeCancelled());
    });
  });

  test("a failed attempt is retried after the backoff with the same id and body, until a 2xx", async () => {
    await withService(await webhookService(), async (service) => {
      const { user, hook } = await endpoint(service, "/flaky/retry");
      const deliveryId = await sendTest(service, user.token, hook.webhook_id);
      const first = await attempted(service, user.token, hook.webhook_id);
      expect(first).toMatchObject({ status: "pending", attempts: 1, last_status_code: 500, last_error: "HTTP 500 Internal Server Error" });
      // The first retry is due a minute after the failure.
      const wait = (Date.parse(first.next_attempt_at) - Date.now()) / 1000;
      expect(wait).toBeGreaterThan(WEBHOOK.retry.baseSeconds - 10);
      expect(wait).toBeLessThanOrEqual(WEBHOOK.retry.baseSeconds);
      await testQuery((await testService()).db, "webhook_outbox_make_due", [hook.webhook_id]);
      service.deps.webhooks.nudge();
      const second = await attempted(service, user.token, hook.webhook_id, 2, (row) => row.status !== "pending");
      // Delivered: the earlier attempt's reason is no longer shown.
      expect(second).toMatchObject({ delivery_id: deliveryId, status: "delivered", attempts: 2, last_status_code: 200, last_error: null });
      const [a, b] = receiver.to("/flaky/retry");
      expect(b!.headers["webhook-id"]).toBe(a!.headers["webhook-id"]!);
      expect(b!.body).toBe(a!.body);
      expect(new Webhook(hook.secret).verify(b!.body, headerBag(b!.headers))).toMatchObject({ type: "webhook.test" });
    });
  });
});

describe("private targets at the moment of delivery", () => {
  /** A name that resolves to a public address at first (the check at creation), then to `later`. */
  function rebinding(later: string, calls: string[]): Lookup {
    return async (host) => {
      calls.push(host);
      return [{ address: calls.length === 1 ? "93.184.215.14" : later, family: 4 }];
    };
  }

  test("a name that resolves to a loopback address when delivered is refused: nothing is sent, the delivery fails at once with the reason", async () => {
    const calls: string[] = [];
    await withService(await webhookService({ config: { webhookAllowPrivate: false }, lookup: rebinding("127.0.0.1", calls) }), async (service) => {
      const { user, hook } = await endpoint(service, "", { url: `https://rebind.example.com:${receiver.port}/ok?rebound` });
      await sendTest(service, user.token, hook.webhook_id);
      const done = await attempted(service, user.token, hook.webhook_id);
      // The refusal will not change on a retry: no three days of attempts.
      expect(done).toMatchObject({ status: "failed", attempts: 1, last_status_code: null, next_attempt_at: null, last_error: "rebind.example.com resolves to a loopback address" });
      expect(receiver.to("/ok?rebound")).toEqual([]);
      // Resolved once at creation, once for the attempt.
      expect(calls).toEqual(["rebind.example.com", "rebind.example.com"]);
    });
  });

  test("allowed (WEBHOOK_ALLOW_PRIVATE=1), the attempt connects to the address resolved, with the URL's own name for TLS and Host", async () => {
    const calls: string[] = [];
    const lookup: Lookup = async (host) => {
      calls.push(host);
      return [{ address: "127.0.0.1", family: 4 }];
    };
    await withService(await webhookService({ lookup }), async (service) => {
      // "localhost" resolves only through the test's resolver here; the certificate names it.
      const { user, hook } = await endpoint(service, "", { url: `https://localhost:${receiver.port}/ok?by-name` });
      await sendTest(service, user.token, hook.webhook_id);
      const [request] = await receiver.waitFor("/ok?by-name");
      expect(request!.headers.host).toBe(`localhost:${receiver.port}`);
      expect(new Webhook(hook.secret).verify(request!.body, headerBag(request!.headers))).toMatchObject({ type: "webhook.test" });
      expect(calls).toEqual(["localhost"]);
    });
  });

  test("an IP literal that is private is refused when delivered as well (the setting changed since creation)", async () => {
    let user: Awaited<ReturnType<typeof endpoint>>["user"];
    let hook: Awaited<ReturnType<typeof endpoint>>["hook"];
    await withService(await webhookService({ config: { webhookDelivery: false } }), async (service) => {
      ({ user, hook } = await endpoint(service, "/ok?literal"));
      await sendTest(service, user.token, hook.webhook_id);
    });
    await withService(await webhookService({ config: { webhookAllowPrivate: false } }), async (service) => {
      service.deps.webhooks.nudge();
      const done = await attempted(service, user!.token, hook!.webhook_id);
      expect(done).toMatchObject({ status: "failed", attempts: 1, last_status_code: null, next_attempt_at: null, last_error: "127.0.0.1 is a loopback address" });
      expect(receiver.to("/ok?literal")).toEqual([]);
    });
  });
});

describe("TLS", () => {
  test("a receiver whose certificate no trusted authority vouches for gets nothing: the attempt fails and is retried", async () => {
    // Without NODE_EXTRA_CA_CERTS the dev certificate is a stranger.
    await withService(await webhookService({ config: { extraCaCerts: undefined } }), async (service) => {
      const { user, hook } = await endpoint(service, "/ok?untrusted");
      await sendTest(service, user.token, hook.webhook_id);
      const done = await attempted(service, user.token, hook.webhook_id);
      expect(done).toMatchObject({ status: "pending", attempts: 1, last_status_code: null });
      expect(done.last_error).toMatch(/certificate|verify/i);
      expect(receiver.to("/ok?untrusted")).toEqual([]);
    });
  });
});

describe("endpoints that take nothing more", () => {
  test("a delivery whose endpoint was deleted meanwhile ends without a request", async () => {
    await withService(await webhookService({ config: { webhookDelivery: false } }), async (service) => {
      const { user, hook } = await endpoint(service, "/ok?deleted");
      await sendTest(service, user.token, hook.webhook_id);
      expect((await call("DELETE", `/customer/webhooks/${hook.webhook_id}`, { headers: bearer(user.token), service })).status).toBe(200);
      expect((await outbox(hook.webhook_id))[0]).toMatchObject({ status: "failed", last_error: "the endpoint was deleted" });
    });
    expect(receiver.to("/ok?deleted")).toEqual([]);
  });
});
