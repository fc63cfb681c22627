// Client ID Metadata Documents: a client_id that is an https URL is fetched under the webhooks'
// address rules (public addresses only unless WEBHOOK_ALLOW_PRIVATE), and must name itself and the
// redirect URI used. A real HTTPS server on 127.0.0.1 with the dev certificate serves the documents.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Server } from "bun";
import { readFileSync } from "node:fs";
import { createService, type Service } from "../../src/app/service.ts";
import { createLogger } from "../../src/log.ts";
import { OAuthClients, parseDocument, ClientRefused } from "../../src/oauth/clients.ts";
import { WebhookTargets } from "../../src/webhooks/target.ts";
import { devCertificate } from "../security/helpers.ts";
import { bearer } from "../helpers/accounts.ts";
import { addGateway, handoffTarget, pkce } from "../helpers/oauth.ts";
import { BASE, call, expectErrorShape, signup, testConfig, testService } from "../helpers/service.ts";

const REDIRECT = "http://127.0.0.1:47123/callback";
let server: Server<undefined>;
let port = 0;
const hits: string[] = [];
let service: Service;

const doc = (path: string, extra: Record<string, unknown> = {}) => ({ client_id: `https://localhost:${port}${path}`, client_name: "Document Agent", redirect_uris: [REDIRECT], token_endpoint_auth_method: "none", ...extra });

beforeAll(async () => {
  const { cert, key } = await devCertificate();
  server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    tls: { cert: readFileSync(cert, "utf8"), key: readFileSync(key, "utf8") },
    fetch(request) {
      const path = new URL(request.url).pathname;
      hits.push(path);
      if (path === "/good.json" || path === "/cached.json") return Response.json(doc(path));
      if (path === "/other-id.json") return Response.json(doc(path, { client_id: `https://localhost:${port}/good.json` }));
      if (path === "/secret.json") return Response.json(doc(path, { client_secret: "s" }));
      if (path === "/huge.json") return Response.json(doc(path, { client_name: "x".repeat(10_000) }));
      if (path === "/redirect.json") return new Response(null, { status: 302, headers: { location: "/good.json" } });
      return new Response("no", { status: 404 });
    },
  });
  port = server.port!;
  const { db } = await testService();
  const config = testConfig({ webhookAllowPrivate: true, extraCaCerts: cert });
  service = await createService(config, { db, log: createLogger("silent"), webhookLookup: async () => [{ address: "127.0.0.1", family: 4 }] });
}, 60_000);

afterAll(async () => {
  await service?.close();
  server?.stop(true);
});

function query(clientId: string, resource: string, challenge: string) {
  return new URLSearchParams({ response_type: "code", client_id: clientId, redirect_uri: REDIRECT, code_challenge: challenge, code_challenge_method: "S256", state: "s1", resource }).toString();
}

describe("Client ID Metadata Documents", () => {
  test("a document naming itself: the consent names its client, the code exchanges for the URL's client_id", async () => {
    const owner = await signup();
    const gw = await addGateway(owner.tenantId, service);
    const clientId = `https://localhost:${port}/good.json`;
    const { verifier, challenge } = pkce();
    const q = query(clientId, gw.resource, challenge);
    const authorize = await call("GET", `/oauth/authorize?${q}`, { service });
    expect(handoffTarget(authorize).pathname).toBe("/console/consent");
    const details = await call("GET", `/oauth/consent?${q}`, { headers: bearer(owner.token), service });
    expect(details.body.client).toEqual({ client_id: clientId, client_name: "Document Agent", client_uri: null, kind: "metadata_document" });
    const consent = await call("POST", "/oauth/consent", { json: { ...Object.fromEntries(new URLSearchParams(q)), approve: true }, headers: { ...bearer(owner.token), origin: BASE }, service });
    const code = new URL(consent.body.redirect_to).searchParams.get("code")!;
    const token = await call("POST", "/oauth/token", {
      body: new URLSearchParams({ grant_type: "authorization_code", code, code_verifier: verifier, redirect_uri: REDIRECT, client_id: clientId }).toString(),
      headers: { "content-type": "application/x-www-form-urlencoded" },
      service,
    });
    expect(token.status).toBe(200);
    expect((await service.deps.accessTokens.verify(token.body.access_token, gw.resource))?.client_id).toBe(clientId);
  });

  test("a document that names another client, holds a secret, is too big, redirects or is missing: shown, not redirected", async () => {
    const owner = await signup();
    const gw = await addGateway(owner.tenantId, service);
    for (const path of ["/other-id.json", "/secret.json", "/huge.json", "/redirect.json", "/missing.json"]) {
      const reply = await call("GET", `/oauth/authorize?${query(`https://localhost:${port}${path}`, gw.resource, pkce().challenge)}`, { service });
      expectErrorShape(reply, 400, "invalid_request");
      expect(reply.headers.get("location")).toBeNull();
    }
  });

  test("a redirect URI the document does not list is shown, never redirected to", async () => {
    const owner = await signup();
    const gw = await addGateway(owner.tenantId, service);
    const q = new URLSearchParams(query(`https://localhost:${port}/good.json`, gw.resource, pkce().challenge));
    q.set("redirect_uri", "https://evil.example/cb");
    const reply = await call("GET", `/oauth/authorize?${q}`, { service });
    expectErrorShape(reply, 400, "invalid_request");
    expect(reply.body.message).toMatch(/redirect_uri/);
  });

  test("without WEBHOOK_ALLOW_PRIVATE a document on a private address is not fetched", async () => {
    const { service: strict } = await testService();
    const owner = await signup();
    const gw = await addGateway(owner.tenantId);
    const before = hits.length;
    const reply = await call("GET", `/oauth/authorize?${query(`https://127.0.0.1:${port}/good.json`, gw.resource, pkce().challenge)}`, { service: strict });
    expectErrorShape(reply, 400, "invalid_request");
    expect(reply.body.message).toMatch(/loopback|private|not public|127\.0\.0\.1/i);
    expect(hits.length).toBe(before);
  });

  test("a fetched document is kept for minutes, then fetched again", async () => {
    const { cert } = await devCertificate();
    let now = 1_000_000;
    const clients = new OAuthClients(service.deps.db, new WebhookTargets(async () => [{ address: "127.0.0.1", family: 4 }], true), { ca: [readFileSync(cert, "utf8")], now: () => now });
    const url = `https://localhost:${port}/cached.json`;
    const count = () => hits.filter((h) => h === "/cached.json").length;
    const before = count();
    await clients.resolve(url);
    await clients.resolve(url);
    expect(count()).toBe(before + 1);
    now += 5 * 60_000 + 1;
    await clients.resolve(url);
    expect(count()).toBe(before + 2);
  });

  test("parseDocument refuses what the draft forbids", () => {
    const id = "https://agent.example/client.json";
    expect(parseDocument(id, JSON.stringify({ client_id: id, redirect_uris: ["https://agent.example/cb"] })).client_name).toBe("agent.example");
    for (const bad of [
      "not json",
      JSON.stringify([]),
      JSON.stringify({ client_id: "https://other.example/client.json", redirect_uris: ["https://agent.example/cb"] }),
      JSON.stringify({ client_id: id, redirect_uris: [] }),
      JSON.stringify({ client_id: id, redirect_uris: ["http://agent.example/cb"] }),
      JSON.stringify({ client_id: id, redirect_uris: ["https://agent.example/cb"], token_endpoint_auth_method: "client_secret_basic" }),
    ]) {
      expect(() => parseDocument(id, bad)).toThrow(ClientRefused);
    }
  });
});
