// Run by test/app/server.test.ts under Deno: a request whose answer takes the seconds given, on a
// listener from src/runtime.ts as `warden serve` starts it there. Prints one JSON line.
import { listen, RUNTIME } from "../../src/runtime.ts";

const seconds = Number(process.argv[2]);
const server = listen({
  port: 0,
  hostname: "127.0.0.1",
  fetch: () => new Promise<Response>((resolve) => setTimeout(() => resolve(new Response("answered")), seconds * 1000)),
});
const started = performance.now();
let status = 0;
let text = "";
try {
  const response = await fetch(`http://127.0.0.1:${server.port}/`);
  status = response.status;
  text = await response.text();
} catch (err) {
  text = String(err);
}
await server.stop(true);
console.log(JSON.stringify({ runtime: RUNTIME, status, text, seconds: (performance.now() - started) / 1000 }));
