// The warden SDK (docs/sdk.md): the typed client that scripts/build-sdk.ts generates from
// /openapi.json into ./gen (a build product, not in the repository), and the offline verifiers the
// CLI and the console run. Bundled into dist/sdk/ with no runtime dependency: WebCrypto and fetch
// only, so it runs on Node, Bun, Deno and in browsers.
import { createClient, createConfig, type Client } from "./gen/client/index.ts";
import { getCustomerReceiptsByReceiptId, getCustomerReceiptsByReceiptIdProof, getCustomerReceiptsCheckpoint, getWellKnownJwksJson } from "./gen/sdk.gen.ts";
import type { Jwks } from "./verify.ts";

export * from "./gen/index.ts";
export { createClient, createConfig, type Client, type Config } from "./gen/client/index.ts";
export * from "./verify.ts";
export * from "./webhook.ts";

export interface WardenOptions {
  /** The service's address, e.g. https://warden.example.com (its PUBLIC_URL). */
  baseUrl: string;
  /** An API key (`warden_live_...`), sent as X-API-Key to the routes that take one. */
  apiKey?: string;
  /** A session token (from signup or login), sent as `Authorization: Bearer` to the routes that take one. */
  token?: string;
  /** Another fetch (a test double, a proxy agent); default: the global one. */
  fetch?: typeof fetch;
}

/**
 * A client for the generated functions: `postV1Protect({ client, body })`. Each credential goes
 * only to the routes whose OpenAPI security names it; a call answers `{ data, error, response }`,
 * or throws the error body with `throwOnError: true`.
 */
export function createWarden(options: WardenOptions): Client {
  const client = createClient(
    createConfig({
      baseUrl: options.baseUrl.replace(/\/+$/, ""),
      fetch: options.fetch,
      // The AuthZEN routes also take the key as a bearer token; X-API-Key already carries it.
      auth: (scheme) => (scheme.type === "apiKey" ? options.apiKey : scheme.scheme === "bearer" && scheme.key !== "apiKeyBearer" ? options.token : undefined),
    }),
  );
  return withoutClientOption(client);
}

const METHODS = ["connect", "delete", "get", "head", "options", "patch", "post", "put", "trace", "request"] as const;

/**
 * The generated functions pass a call's options, `client` included, to the client, whose fetch
 * client spreads them into the Request it builds; Deno refuses a `client` init that is not a
 * Deno.HttpClient (hey-api/hey-api#4177). This client drops the option before it gets there.
 */
function withoutClientOption(base: Client): Client {
  const wrapped: Record<string, unknown> = { ...base };
  for (const method of METHODS) {
    const call = base[method] as (options: Record<string, unknown>) => unknown;
    wrapped[method] = ({ client: _selector, ...options }: Record<string, unknown>) => call(options);
  }
  return wrapped as unknown as Client;
}

/** The service's public keys, for the verifiers. */
export async function fetchJwks(client: Client): Promise<Jwks> {
  const { data } = await getWellKnownJwksJson({ client, throwOnError: true });
  return data as Jwks;
}

/**
 * What `warden proof` fetches, with a session: the stored receipt, the signed checkpoint, and the
 * receipt's inclusion proof at that checkpoint's size; `verifyProofBundle()` checks it offline.
 */
export async function fetchProofBundle(client: Client, receiptId: string) {
  const { data: checkpoint } = await getCustomerReceiptsCheckpoint({ client, throwOnError: true });
  const { data: stored } = await getCustomerReceiptsByReceiptId({ client, path: { receipt_id: receiptId }, throwOnError: true });
  const { data: proof } = await getCustomerReceiptsByReceiptIdProof({ client, path: { receipt_id: receiptId }, query: { tree_size: checkpoint.tree_size }, throwOnError: true });
  return { receipt: stored.receipt, proof, checkpoint };
}
