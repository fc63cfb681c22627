// OAuth clients (docs/api.md, "OAuth for agents"): an agent is known either by the id warden gave
// it at RFC 7591 registration (`cli_...`, stored), or by the https URL of its Client ID Metadata
// Document, which is fetched under the address rules of webhooks (https, a host that resolves only
// to public addresses unless WEBHOOK_ALLOW_PRIVATE), with a deadline and a size cap, and kept for a
// few minutes.
import { request } from "node:https";
import { isIP } from "node:net";
import { BoundedMap } from "../bounded-map.ts";
import type { Queryable } from "../db/index.ts";
import { newId } from "../ids.ts";
import { bareHost, parseTargetUrl, TargetRefused, type ResolvedAddress, type WebhookTargets } from "../webhooks/target.ts";

/** What the authorization endpoint needs to know of a client. */
export interface OAuthClient {
  client_id: string;
  client_name: string;
  redirect_uris: string[];
  client_uri: string | null;
  /** "registered" (RFC 7591) or "metadata_document" (its id is its document's URL). */
  kind: "registered" | "metadata_document";
}

/** Why a client cannot be used; the message is shown to the person (never redirected). */
export class ClientRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ClientRefused";
  }
}

const LOOPBACK = new Set(["localhost", "127.0.0.1", "[::1]"]);
export const MAX_REDIRECT_URIS = 10;
export const MAX_URL_LENGTH = 2000;

/** Why a redirect URI is not acceptable, or null: https, or http on a loopback host (RFC 8252 7.3); no fragment. */
export function redirectUriProblem(text: string): string | null {
  if (text.length > MAX_URL_LENGTH) return `is longer than ${MAX_URL_LENGTH} characters`;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return "is not a URL";
  }
  if (url.hash || text.includes("#")) return "must not have a fragment";
  if (url.username || url.password) return "must not carry a user name or password";
  if (url.protocol === "https:") return null;
  if (url.protocol === "http:" && LOOPBACK.has(url.hostname)) return null;
  return "must be https (or http on localhost, 127.0.0.1 or [::1])";
}

/** Whether a client_id names a metadata document: an https URL with a path (draft-ietf-oauth-client-id-metadata-document). */
export function isMetadataDocumentId(clientId: string): boolean {
  if (!clientId.startsWith("https://")) return false;
  try {
    const url = new URL(clientId);
    return url.pathname !== "/" && !url.hash && !url.username && !url.password;
  } catch {
    return false;
  }
}

export interface DocumentLimits {
  timeoutMs: number;
  maxBytes: number;
  /** How long a fetched document is used before it is fetched again. */
  cacheMs: number;
}

export const DEFAULT_DOCUMENT_LIMITS: DocumentLimits = { timeoutMs: 5_000, maxBytes: 5 * 1024, cacheMs: 5 * 60_000 };

export class OAuthClients {
  /** Fetched documents by URL, each kept for `cacheMs` (a client's change shows within minutes). */
  private readonly documents = new BoundedMap<string, { client: OAuthClient; until: number }>(1000);

  constructor(
    private readonly db: Queryable,
    private readonly targets: WebhookTargets,
    private readonly opts: { ca?: string[]; limits?: DocumentLimits; now?: () => number } = {},
  ) {}

  /** RFC 7591: stores a public client; the redirect URIs were checked by the caller's model and redirectUriProblem(). */
  async register(body: { client_name?: string; redirect_uris: string[]; client_uri?: string }): Promise<OAuthClient & { created_at: string }> {
    const name = body.client_name?.trim() || "Unnamed agent";
    const row = (await this.db.one("oauth/client_create", [newId("cli_"), name, body.redirect_uris, body.client_uri ?? null]))!;
    return { client_id: row.client_id, client_name: row.client_name, redirect_uris: row.redirect_uris, client_uri: row.client_uri, kind: "registered", created_at: new Date(row.created_at).toISOString() };
  }

  /** The client a client_id names, or ClientRefused saying why not. */
  async resolve(clientId: string): Promise<OAuthClient> {
    if (/^cli_[0-9A-Za-z]{22}$/.test(clientId)) {
      const row = await this.db.one("oauth/client_get", [clientId]);
      if (!row) throw new ClientRefused("This client_id is not registered here.");
      return { client_id: row.client_id, client_name: row.client_name, redirect_uris: row.redirect_uris, client_uri: row.client_uri, kind: "registered" };
    }
    if (isMetadataDocumentId(clientId)) return this.document(clientId);
    throw new ClientRefused("client_id is neither registered here nor an https URL of a client metadata document.");
  }

  private async document(clientId: string): Promise<OAuthClient> {
    const now = (this.opts.now ?? Date.now)();
    const kept = this.documents.get(clientId);
    if (kept && kept.until > now) return kept.client;
    const limits = this.opts.limits ?? DEFAULT_DOCUMENT_LIMITS;
    let url: URL;
    let address: ResolvedAddress;
    try {
      url = parseTargetUrl(clientId);
      address = await this.targets.resolve(url, limits.timeoutMs);
    } catch (err) {
      if (err instanceof TargetRefused) throw new ClientRefused(`The client's metadata document cannot be fetched: its URL ${err.message}.`);
      throw err;
    }
    let text: string;
    try {
      const got = await getOnce(url, address, { ms: limits.timeoutMs, maxBytes: limits.maxBytes, ca: this.opts.ca });
      if (got.status !== 200) throw new ClientRefused(`The client's metadata document answered HTTP ${got.status}.`);
      text = got.body;
    } catch (err) {
      if (err instanceof ClientRefused) throw err;
      throw new ClientRefused(`The client's metadata document cannot be fetched: ${(err as Error).message}.`);
    }
    const client = parseDocument(clientId, text);
    this.documents.set(clientId, { client, until: now + limits.cacheMs });
    return client;
  }
}

/** A metadata document's client, when it names itself by its own URL and lists valid redirect URIs. */
export function parseDocument(clientId: string, text: string): OAuthClient {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw new ClientRefused("The client's metadata document is not JSON.");
  }
  if (!doc || typeof doc !== "object" || Array.isArray(doc)) throw new ClientRefused("The client's metadata document is not a JSON object.");
  const d = doc as Record<string, unknown>;
  if (d.client_id !== clientId) throw new ClientRefused("The client's metadata document names another client_id than its own URL.");
  const uris = d.redirect_uris;
  if (!Array.isArray(uris) || uris.length === 0 || uris.length > MAX_REDIRECT_URIS || !uris.every((u) => typeof u === "string" && redirectUriProblem(u) === null)) {
    throw new ClientRefused("The client's metadata document has no valid redirect_uris (1 to 10, https or http on a loopback host).");
  }
  for (const secretful of ["client_secret", "client_secret_expires_at"]) {
    if (secretful in d) throw new ClientRefused("A client metadata document must not hold a client secret.");
  }
  const method = d.token_endpoint_auth_method;
  if (method !== undefined && method !== "none") throw new ClientRefused("Only public clients (token_endpoint_auth_method \"none\") may use a metadata document here.");
  const name = typeof d.client_name === "string" && d.client_name.trim() ? d.client_name.trim().slice(0, 200) : new URL(clientId).host;
  const clientUri = typeof d.client_uri === "string" && d.client_uri.length <= MAX_URL_LENGTH ? d.client_uri : null;
  return { client_id: clientId, client_name: name, redirect_uris: uris as string[], client_uri: clientUri, kind: "metadata_document" };
}

/**
 * GETs url at the resolved address (no redirect followed), reading at most maxBytes of the answer:
 * a bigger document is refused rather than cut.
 */
function getOnce(url: URL, target: ResolvedAddress, opts: { ms: number; maxBytes: number; ca?: string[] }): Promise<{ status: number; body: string }> {
  const host = bareHost(url);
  return new Promise((resolve, reject) => {
    let settled = false;
    const done = (err: Error | null, value?: { status: number; body: string }) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.destroy();
      if (err) reject(err);
      else resolve(value!);
    };
    const req = request({
      host: target.address,
      family: target.family,
      port: url.port ? Number(url.port) : 443,
      method: "GET",
      path: `${url.pathname}${url.search}`,
      servername: isIP(host) ? undefined : host,
      headers: { host: url.host, accept: "application/json" },
      ca: opts.ca,
      agent: false,
    });
    const timer = setTimeout(() => done(new Error(`no answer within ${opts.ms} ms`)), opts.ms);
    req.on("response", (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on("data", (chunk: Buffer) => {
        size += chunk.length;
        if (size > opts.maxBytes) return done(new Error(`the document is larger than ${opts.maxBytes} bytes`));
        chunks.push(chunk);
      });
      res.on("end", () => done(null, { status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }));
      res.on("error", (err) => done(err));
    });
    req.on("error", (err) => done(err));
    req.end();
  });
}
