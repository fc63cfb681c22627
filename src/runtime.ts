// The few things warden takes from Bun itself (listening, bcrypt, stdin, client TLS), behind one
// seam so the same source runs on Deno 2 (npm run start:deno). On Bun each is Bun's own;
// elsewhere a web-standard or WASM stand-in with the same results, down to a bcrypt hash.
import { createHash } from "node:crypto";

export const RUNTIME: "bun" | "deno" | "other" = typeof Bun !== "undefined" ? "bun" : "Deno" in globalThis ? "deno" : "other";

// ---- bcrypt -------------------------------------------------------------------------------

const BCRYPT_MAX_BYTES = 72;

/**
 * The key bcrypt sees for a password, as Bun.password derives it: the UTF-8 bytes, or, past
 * bcrypt's 72-byte limit, their raw SHA-512 digest, so that no character is silently dropped.
 */
export function bcryptKey(password: string): Uint8Array {
  const bytes = new TextEncoder().encode(password);
  return bytes.length > BCRYPT_MAX_BYTES ? new Uint8Array(createHash("sha512").update(bytes).digest()) : bytes;
}

/**
 * bcrypt in WebAssembly (hash-wasm) that reads and writes exactly what Bun.password does: the
 * stand-in off Bun. It runs on the calling thread, where Bun's runs on a pool (docs/deployment.md).
 */
export const wasmBcrypt = {
  async hash(password: string, cost: number): Promise<string> {
    const { bcrypt } = await import("hash-wasm");
    const salt = crypto.getRandomValues(new Uint8Array(16));
    const hash = await bcrypt({ password: bcryptKey(password), salt, costFactor: cost, outputType: "encoded" });
    // hash-wasm writes $2a$, Bun $2b$: the same function for keys under 255 bytes (ours are at
    // most 72), so write what Bun writes and a stored hash never tells which runtime made it.
    return hash.replace(/^\$2a\$/, "$2b$");
  },
  async verify(password: string, hash: string): Promise<boolean> {
    const { bcryptVerify } = await import("hash-wasm");
    return bcryptVerify({ password: bcryptKey(password), hash });
  },
};

/** A bcrypt hash (`$2b$`) that both runtimes verify. */
export function bcryptHash(password: string, cost: number): Promise<string> {
  return RUNTIME === "bun" ? Bun.password.hash(password, { algorithm: "bcrypt", cost }) : wasmBcrypt.hash(password, cost);
}

/** Checks a password against a bcrypt hash made by either runtime. */
export function bcryptVerify(password: string, hash: string): Promise<boolean> {
  return RUNTIME === "bun" ? Bun.password.verify(password, hash, "bcrypt") : wasmBcrypt.verify(password, hash);
}

// ---- stdin --------------------------------------------------------------------------------

/** Everything on standard input, as UTF-8 text. */
export async function readStdin(): Promise<string> {
  if (RUNTIME === "bun") return new Response(Bun.stdin.stream()).text();
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks).toString("utf8");
}

// ---- client TLS ---------------------------------------------------------------------------

/**
 * fetch options that accept a self-signed certificate (the CLI's WARDEN_INSECURE=1). Deno has no
 * per-request switch: run it with --unsafely-ignore-certificate-errors=HOST instead.
 */
export function insecureFetchInit(): RequestInit {
  return RUNTIME === "bun" ? ({ tls: { rejectUnauthorized: false } } as RequestInit) : {};
}

// ---- listening ----------------------------------------------------------------------------

/**
 * Seconds a connection may stay silent before the server cuts it: comfortably above the longest
 * answer the service holds back, `GET /v1/approvals/{id}?wait=30` (docs/api.md). Bun's default of
 * 10 s cut such a wait at about 12 s; Bun allows at most 255. Deno.serve has no idle timeout: it
 * keeps a connection open as long as its handler runs, so there is nothing to set there.
 */
export const IDLE_TIMEOUT_S = 75;

/** The part of Bun's server that warden uses; Deno's is adapted to it. */
export interface Listener {
  readonly port: number;
  /** The peer address of a request this listener is answering. */
  requestIP(request: Request): { address: string } | null;
  /** Stops listening; in-flight requests finish unless closeActiveConnections. */
  stop(closeActiveConnections?: boolean): Promise<void>;
}

export interface ListenOptions {
  port: number;
  hostname: string;
  tls?: { cert: string; key: string };
  /** Bun stops far larger bodies early with it; elsewhere the front door's own limit applies. */
  maxRequestBodySize?: number;
  fetch(request: Request, listener: Listener): Response | Promise<Response>;
}

/** Serves fetch on Bun.serve, or on Deno.serve under Deno; every listener of warden starts here. */
export function listen(opts: ListenOptions): Listener {
  if (RUNTIME === "bun") {
    let self: Listener;
    const server = Bun.serve({ ...opts, idleTimeout: IDLE_TIMEOUT_S, fetch: (request) => opts.fetch(request, self) });
    self = listener(server);
    return self;
  }
  if (RUNTIME === "deno") return denoListen(opts);
  throw new Error("warden serves on Bun or Deno");
}

function listener(server: ReturnType<typeof Bun.serve>): Listener {
  return {
    port: server.port ?? 0,
    requestIP: (request) => server.requestIP(request),
    stop: (closeActiveConnections) => server.stop(closeActiveConnections),
  };
}

// The slice of Deno's API used here (the root tsconfig checks against Bun's types only).
interface DenoServe {
  serve(
    options: { port: number; hostname: string; cert?: string; key?: string; signal: AbortSignal; onListen(addr: unknown): void },
    handler: (request: Request, info: { remoteAddr: { hostname: string } }) => Response | Promise<Response>,
  ): { addr: { port: number }; finished: Promise<void>; shutdown(): Promise<void> };
}

function denoListen(opts: ListenOptions): Listener {
  const deno = (globalThis as unknown as { Deno: DenoServe }).Deno;
  const peers = new WeakMap<Request, string>();
  const abort = new AbortController();
  const server = deno.serve(
    { port: opts.port, hostname: opts.hostname, cert: opts.tls?.cert, key: opts.tls?.key, signal: abort.signal, onListen: () => {} },
    (request, info) => {
      peers.set(request, info.remoteAddr.hostname);
      return opts.fetch(request, self);
    },
  );
  const self: Listener = {
    port: server.addr.port,
    requestIP: (request) => {
      const address = peers.get(request);
      return address === undefined ? null : { address };
    },
    async stop(closeActiveConnections) {
      if (closeActiveConnections) abort.abort();
      else await server.shutdown();
      await server.finished;
    },
  };
  return self;
}

// ---- local (Unix) sockets -----------------------------------------------------------------

/** One accepted connection of a Unix socket listener. */
export interface LocalConnection {
  onData(fn: (chunk: Uint8Array) => void): void;
  onClose(fn: () => void): void;
  /** Resolves once the runtime has taken the bytes (waits out backpressure). */
  write(text: string): Promise<void>;
  end(): void;
}

/**
 * Listens on a Unix socket at path. Both runtimes serve one through node:net (on Deno it needs
 * --allow-read and --allow-write for the path); neither tells who the peer is (no SO_PEERCRED), so
 * the caller guards the socket with file permissions.
 */
export async function listenUnix(path: string, accept: (conn: LocalConnection) => void): Promise<{ close(): Promise<void> }> {
  const { createServer } = await import("node:net");
  const open = new Set<import("node:net").Socket>();
  const server = createServer((socket) => {
    open.add(socket);
    socket.on("close", () => open.delete(socket));
    socket.on("error", () => socket.destroy());
    accept({
      onData: (fn) => socket.on("data", (chunk: Buffer) => fn(chunk)),
      onClose: (fn) => socket.on("close", fn),
      write: (text) => new Promise<void>((resolve) => (socket.write(text) ? resolve() : socket.once("drain", resolve).once("close", resolve))),
      end: () => socket.end(),
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(path, () => resolve());
  });
  return {
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Connections still open (an operator's command) are cut: the database closes next.
        for (const socket of open) socket.destroy();
      }),
  };
}
