// A minimal HTTP/1.1 client over kept-alive TLS connections, for the fixed-rate generator: one
// request at a time per connection, the request's bytes made once by the caller, the answer read
// only as far as its status and length. Bun's fetch() does TLS and HTTP on a thread of its own and
// hands every answer back to the script's thread; at ten thousand requests a second that hop and
// its objects made the generator a second busy process on the service's cores (0.5 cores at
// 12,000 req/s, its threads waiting for a core 70-130 ms a second). Here the sockets are the
// script's own event loop's (Bun.connect), as wrk's are its threads'.
import type { Socket } from "bun";

/** The bytes of one request: `method path`, the headers, the body. */
export function requestBytes(url: URL, method: string, headers: Record<string, string>, body: string | undefined): Uint8Array {
  const lines = [`${method} ${url.pathname}${url.search} HTTP/1.1`, `Host: ${url.host}`];
  for (const [k, v] of Object.entries(headers)) lines.push(`${k}: ${v}`);
  const payload = body === undefined ? undefined : Buffer.from(body);
  if (payload) lines.push(`Content-Length: ${payload.length}`);
  const head = Buffer.from(lines.join("\r\n") + "\r\n\r\n", "latin1");
  return payload ? Buffer.concat([head, payload]) : head;
}

type Done = (status: number) => void;

const HEADER_END = Buffer.from("\r\n\r\n");

interface Conn {
  socket: Socket<Conn> | undefined;
  /** Which connection attempt is this one's own: events of an earlier, failed socket are ignored. */
  attempt: number;
  /** The answer's bytes received so far. */
  buffer: Buffer;
  done: Done | undefined;
  /** Bytes still to write of the request (a full send buffer). */
  unsent: Uint8Array | undefined;
  sentAt: number;
}

/** Length of the answer in `b` once it is whole (its head and body), else 0; the status too. */
export function complete(b: Buffer): { length: number; status: number } {
  const end = b.indexOf(HEADER_END);
  if (end < 0) return { length: 0, status: 0 };
  const head = b.toString("latin1", 0, end);
  const status = Number(head.slice(9, 12));
  const m = /\r\ncontent-length:\s*(\d+)/i.exec(head);
  if (m) {
    const length = end + 4 + Number(m[1]);
    return { length: b.length >= length ? length : 0, status };
  }
  if (/\r\ntransfer-encoding:\s*chunked/i.test(head)) {
    // Chunks to the last (size 0): the answer ends with "0\r\n\r\n".
    const last = b.indexOf("\r\n0\r\n\r\n", end + 2);
    const empty = b.indexOf("0\r\n\r\n", end + 4) === end + 4;
    if (empty) return { length: end + 9, status };
    return { length: last < 0 ? 0 : last + 7, status };
  }
  return { length: end + 4, status };
}

/**
 * `connections` TLS connections to `url`'s host, opened on first use. `send` writes a request on an
 * idle connection and calls `done(status)` with the answer's status, or 0 when the connection failed
 * or `timeoutMs` passed (the connection is then closed and opened again for the next request).
 * The caller sends on at most `connections` requests at once.
 */
export function connectionPool(url: URL, connections: number, timeoutMs: number) {
  const idle: Conn[] = [];
  const all: Conn[] = [];
  for (let i = 0; i < connections; i++) {
    const c: Conn = { socket: undefined, attempt: 0, buffer: Buffer.alloc(0), done: undefined, unsent: undefined, sentAt: 0 };
    all.push(c);
    idle.push(c);
  }
  const finish = (c: Conn, status: number) => {
    const done = c.done;
    c.done = undefined;
    c.buffer = Buffer.alloc(0);
    c.unsent = undefined;
    if (status === 0) {
      c.attempt++;
      c.socket?.end();
      c.socket = undefined;
    }
    idle.push(c);
    done?.(status);
  };
  const write = (c: Conn, bytes: Uint8Array) => {
    const n = c.socket!.write(bytes);
    c.unsent = n < bytes.length ? bytes.subarray(Math.max(n, 0)) : undefined;
  };
  const open = (c: Conn, first: Uint8Array) => {
    const attempt = ++c.attempt;
    const mine = () => attempt === c.attempt;
    return Bun.connect<Conn>({
      hostname: url.hostname,
      port: Number(url.port || 443),
      tls: { rejectUnauthorized: false },
      data: c,
      socket: {
        open(socket) {
          if (!mine()) return void socket.end();
          c.socket = socket;
          write(c, first);
        },
        drain() {
          if (mine() && c.unsent) write(c, c.unsent);
        },
        data(_socket, chunk) {
          if (!mine()) return;
          c.buffer = c.buffer.length === 0 ? Buffer.from(chunk) : Buffer.concat([c.buffer, chunk]);
          const { length, status } = complete(c.buffer);
          if (length > 0 && c.done) finish(c, status);
        },
        close() {
          if (!mine()) return;
          c.socket = undefined;
          if (c.done) finish(c, 0);
        },
        error() {
          if (mine() && c.done) finish(c, 0);
        },
        connectError() {
          if (mine() && c.done) finish(c, 0);
        },
      },
    }).catch(() => {
      if (mine() && c.done) finish(c, 0);
    });
  };
  const sweeper = setInterval(() => {
    const now = performance.now();
    for (const c of all) if (c.done && now - c.sentAt > timeoutMs) finish(c, 0);
  }, Math.min(1000, timeoutMs));
  return {
    send(bytes: Uint8Array, done: Done): void {
      const c = idle.pop()!;
      c.done = done;
      c.sentAt = performance.now();
      if (c.socket) write(c, bytes);
      else void open(c, bytes);
    },
    close(): void {
      clearInterval(sweeper);
      for (const c of all) c.socket?.end();
    },
  };
}
