// An id that names nothing the caller owns is 404 not_found whatever its shape (docs/decisions.md,
// Unknown ids; as Stripe answers); only a value of the wrong JSON type is 400 invalid_request.
import { describe, expect, test } from "bun:test";
import { call, expectErrorShape, signup } from "../helpers/service.ts";

const SHAPES = ["rcpt_AAAA", "A".repeat(40), "key_x", "upgr_x", "rcpt_" + "A".repeat(22), "key_" + "0".repeat(22), "é".repeat(300), "\u0000", "a b"];

describe("unknown ids of any shape answer 404 not_found", async () => {
  const owner = await signup();
  const jwt = { authorization: `Bearer ${owner.token}` };
  const key = { "x-api-key": owner.apiKey };
  const inPath: [string, (id: string) => string][] = [
    ["POST", (id) => `/customer/keys/${id}/rotate`],
    ["POST", (id) => `/customer/keys/${id}/revoke`],
    ["POST", (id) => `/customer/upgrades/${id}/cancel`],
    ["GET", (id) => `/customer/receipts/${id}`],
    ["GET", (id) => `/customer/receipts/${id}/proof`],
  ];
  for (const [method, path] of inPath) {
    test(`${method} ${path("{id}")}`, async () => {
      for (const id of SHAPES) expectErrorShape(await call(method, path(encodeURIComponent(id)), { headers: jwt }), 404, "not_found");
    });
  }

  test("POST /v1/execute receipt_id", async () => {
    for (const id of SHAPES) expectErrorShape(await call("POST", "/v1/execute", { headers: key, json: { receipt_id: id } }), 404, "not_found");
  });

  test("a value of the wrong JSON type is 400 invalid_request", async () => {
    for (const receipt_id of [5, null, ["rcpt_AAAA"], { id: "rcpt_AAAA" }, true]) {
      const reply = await call("POST", "/v1/execute", { headers: key, json: { receipt_id } });
      expectErrorShape(reply, 400, "invalid_request");
      expect(reply.body.message).toContain("receipt_id");
    }
  });
});
