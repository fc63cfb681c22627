// The fixed-rate generator's HTTP/1.1 client (scripts/bench/http1.ts): an answer is whole only once
// its head and its body (by Content-Length, or chunks to the last) have arrived, and a pool of
// kept-alive TLS connections gets every answer's status, or 0 for a connection that failed.
import { describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { complete, connectionPool, requestBytes } from "../../scripts/bench/http1.ts";
import { loadTls } from "../../src/http/tls.ts";

const b = (s: string) => Buffer.from(s, "latin1");

describe("complete()", () => {
  test("by Content-Length: not before the last byte of the body", () => {
    const answer = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nContent-Length: 11\r\n\r\n{\"ok\":true}";
    expect(complete(b(answer))).toEqual({ length: answer.length, status: 200 });
    expect(complete(b(answer.slice(0, -1))).length).toBe(0);
    expect(complete(b(answer.slice(0, 20))).length).toBe(0);
  });

  test("chunked: not before the last chunk; an empty body too", () => {
    const answer = "HTTP/1.1 429 Too Many Requests\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n";
    expect(complete(b(answer))).toEqual({ length: answer.length, status: 429 });
    expect(complete(b(answer.slice(0, -3))).length).toBe(0);
    const empty = "HTTP/1.1 204 No Content\r\ntransfer-encoding: chunked\r\n\r\n0\r\n\r\n";
    expect(complete(b(empty))).toEqual({ length: empty.length, status: 204 });
  });
});

describe("connectionPool()", () => {
  test("answers by status over a kept-alive connection; one closed without an answer gives 0 and is opened again", async () => {
    const dir = mkdtempSync(join(tmpdir(), "warden-http1-"));
    const tls = await loadTls({ dataDir: dir, log: () => {} });
    let opened = 0;
    let requests = 0;
    // Answers each request (one at a time) 201, except every fifth, whose connection it closes.
    const server = Bun.listen({
      hostname: "127.0.0.1",
      port: 0,
      tls: { cert: tls.cert, key: tls.key },
      socket: {
        open() {
          opened++;
        },
        data(socket) {
          if (++requests % 5 === 0) socket.end();
          else socket.write("HTTP/1.1 201 Created\r\ncontent-type: application/json\r\nContent-Length: 2\r\n\r\n{}");
        },
      },
    });
    try {
      const url = new URL(`https://127.0.0.1:${server.port}/v1/x`);
      const pool = connectionPool(url, 2, 5_000);
      const request = requestBytes(url, "POST", { "content-type": "application/json" }, JSON.stringify({ a: 1 }));
      const statuses: number[] = [];
      for (let i = 0; i < 12; i++) statuses.push(await new Promise<number>((resolve) => pool.send(request, resolve)));
      pool.close();
      expect(statuses).toEqual([201, 201, 201, 201, 0, 201, 201, 201, 201, 0, 201, 201]);
      // One connection, opened again after each close: not one per request.
      expect(opened).toBe(3);
    } finally {
      server.stop(true);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("the request's bytes: method, path, Host, headers, Content-Length and body", () => {
    const text = Buffer.from(requestBytes(new URL("https://127.0.0.1:8443/v1/simulate?x=1"), "POST", { "X-API-Key": "k" }, "{}")).toString("latin1");
    expect(text).toBe("POST /v1/simulate?x=1 HTTP/1.1\r\nHost: 127.0.0.1:8443\r\nX-API-Key: k\r\nContent-Length: 2\r\n\r\n{}");
  });
});
