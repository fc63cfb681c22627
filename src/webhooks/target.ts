// Where a webhook may go (docs/api.md, "Webhooks"; docs/security.md): an https URL of at most
// 2,000 characters, without credentials, whose host resolves only to public addresses
// (src/webhooks/address.ts), unless the operator set WEBHOOK_ALLOW_PRIVATE=1. Checked when an
// endpoint is created and again at every attempt: the name is resolved once per attempt and the
// attempt connects to the address checked, so a name that changes its answer between the check
// and the connection (DNS rebinding) cannot lead the service elsewhere.
import { lookup as dnsLookup } from "node:dns/promises";
import { isIP } from "node:net";
import { classifyAddress } from "./address.ts";

export const URL_MAX_LENGTH = 2000;

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Every address a host name resolves to (node:dns lookup, `all`). Tests pass their own. */
export type Lookup = (hostname: string) => Promise<ResolvedAddress[]>;

export const systemLookup: Lookup = async (hostname) =>
  (await dnsLookup(hostname, { all: true, verbatim: true })).map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));

/** A URL or a host the service will not call; the message says why, naming no resolved address. */
export class TargetRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = "TargetRefused";
  }
}

/** A host that resolves to a non-public address: the same on every retry, so a delivery ends at once. */
export class TargetNotPublic extends TargetRefused {
  constructor(message: string) {
    super(message);
    this.name = "TargetNotPublic";
  }
}

/** The host as a connection names it: an IPv6 literal without its brackets. */
export function bareHost(url: URL): string {
  return url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
}

/** The URL's form: https, length, no credentials. Throws TargetRefused. */
export function parseTargetUrl(text: string): URL {
  if (text.length > URL_MAX_LENGTH) throw new TargetRefused(`is longer than ${URL_MAX_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new TargetRefused("is not a URL");
  }
  if (url.protocol !== "https:") throw new TargetRefused("must be https");
  if (url.username || url.password) throw new TargetRefused("must not carry a user name or password");
  if (!url.hostname) throw new TargetRefused("has no host");
  return url;
}

function withDeadline<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TargetRefused(what)), Math.max(ms, 0));
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

export class WebhookTargets {
  constructor(
    private readonly lookup: Lookup,
    /** WEBHOOK_ALLOW_PRIVATE=1: any address will do (development, a receiver inside the network). */
    readonly allowPrivate: boolean,
  ) {}

  /**
   * The one address an attempt connects to: the host resolved once, within `ms`; every address
   * it resolves to must be public (one that is not refuses the host, whichever would be used).
   */
  async resolve(url: URL, ms: number): Promise<ResolvedAddress> {
    const host = bareHost(url);
    const literal = isIP(host);
    let addresses: ResolvedAddress[];
    if (literal) addresses = [{ address: host, family: literal === 6 ? 6 : 4 }];
    else {
      try {
        addresses = await withDeadline(this.lookup(host), ms, `${host} did not resolve in time`);
      } catch (err) {
        if (err instanceof TargetRefused) throw err;
        const code = (err as { code?: string }).code;
        throw new TargetRefused(code === "ENOTFOUND" || code === "ENODATA" ? `${host} does not resolve` : `${host} could not be resolved (${code ?? "error"})`);
      }
    }
    if (addresses.length === 0) throw new TargetRefused(`${host} does not resolve`);
    if (!this.allowPrivate) {
      for (const { address } of addresses) {
        const verdict = classifyAddress(address);
        if (!verdict.public) throw new TargetNotPublic(literal ? `${host} is ${verdict.reason}` : `${host} resolves to ${verdict.reason}`);
      }
    }
    return addresses[0]!;
  }

  /**
   * A new endpoint's URL as it will be stored, or TargetRefused: its form and, unless private
   * targets are allowed, that its host resolves (within 5 s) only to public addresses.
   */
  async check(text: string): Promise<string> {
    const url = parseTargetUrl(text);
    if (!this.allowPrivate) await this.resolve(url, 5000);
    return text;
  }
}
