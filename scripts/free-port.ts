// A TCP port that nothing listens on at this moment, as the kernel hands out for port 0. A random
// pick in 20000-40000 reached into the kernel's ephemeral range (32768-60999 here), where the
// outgoing connections of a busy machine (a test suite's database pool) hold ports, and CI once
// failed to start the service on one ("Is port 35740 in use?").
export function freePort(): number {
  const probe = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = probe.port;
  probe.stop(true);
  return port;
}
