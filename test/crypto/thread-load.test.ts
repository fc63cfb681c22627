// ThreadLoad: saturated from a window whose CPU share reaches `on` until one falls under `off`;
// never where the runtime cannot tell or there is no other core.
import { describe, expect, test } from "bun:test";
import { ThreadLoad } from "../../src/crypto/thread-load.ts";

/** A clock and a CPU meter moved by hand: each step is `wall` ms of which `cpu` ms on the CPU. */
function meter(opts: { cores?: number; cpu?: boolean } = {}) {
  let now = 1_000;
  let cpu = 0;
  const load = new ThreadLoad({ now: () => now, cpuMicros: () => (opts.cpu === false ? undefined : cpu * 1000), cores: opts.cores ?? 2 });
  return {
    load,
    step(wall: number, busy: number) {
      now += wall;
      cpu += busy;
      return load.saturated();
    },
  };
}

describe("ThreadLoad", () => {
  test("saturated from a busy window, until a window is under the lower share", () => {
    const m = meter();
    expect(m.step(100, 50)).toBe(false);
    expect(m.step(100, 89)).toBe(false);
    expect(m.step(100, 95)).toBe(true);
    // Between the two shares it stays as it is: no flapping around one threshold.
    expect(m.step(100, 80)).toBe(true);
    expect(m.step(100, 76)).toBe(true);
    expect(m.step(100, 70)).toBe(false);
    expect(m.step(100, 80)).toBe(false);
    expect(m.step(100, 100)).toBe(true);
  });

  test("measured once a window has passed: calls within it keep the last answer", () => {
    const m = meter();
    expect(m.step(100, 100)).toBe(true);
    expect(m.step(40, 0)).toBe(true);
    expect(m.step(40, 0)).toBe(true);
    // The window now holds 100 ms of which 0 busy.
    expect(m.step(20, 0)).toBe(false);
  });

  test("an idle stretch after a busy one: the first measure covers it all", () => {
    const m = meter();
    expect(m.step(100, 100)).toBe(true);
    expect(m.step(60_000, 100)).toBe(false);
  });

  test("never with one core, nor where the runtime gives no thread CPU time", () => {
    const one = meter({ cores: 1 });
    expect(one.step(100, 100)).toBe(false);
    const blind = meter({ cpu: false });
    expect(blind.step(100, 100)).toBe(false);
  });

  test("the real meter: a busy loop on this thread reads as saturated", () => {
    // A low bar: a loaded machine may take some of the window from this thread, so a few windows
    // are tried; an idle thread never reads as saturated in any of them (the test above).
    const load = new ThreadLoad({ windowMs: 50, on: 0.5, cores: 2 });
    let saturated = false;
    for (let attempt = 0; attempt < 10 && !saturated; attempt++) {
      const end = performance.now() + 60;
      while (performance.now() < end) {} // burn this thread's CPU
      saturated = load.saturated();
    }
    expect(saturated).toBe(true);
  });
});
