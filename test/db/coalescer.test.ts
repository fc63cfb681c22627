import { expect, test } from "bun:test";
import { Coalescer } from "../../src/db/coalescer.ts";

/** Lets the coalescer's bookkeeping after a settled call (its finally) run. */
const settle = () => Bun.sleep(1);

/** A run function whose calls the test releases by hand, recording what each call got. */
function controlled() {
  const calls: { items: number[]; release: (results: (number | Error)[] | Error) => void }[] = [];
  const run = (items: number[]) =>
    new Promise<(number | Error)[]>((resolve, reject) => {
      calls.push({ items, release: (r) => (r instanceof Error ? reject(r) : resolve(r)) });
    });
  return { calls, run };
}

test("items that arrive together share one call; items arriving while it is in flight share the next", async () => {
  const { calls, run } = controlled();
  const c = new Coalescer(run, { maxBatch: 10, maxInFlight: 1 });
  const first = [c.submit(1), c.submit(2)];
  // Nothing goes out before the event loop has read what arrived with them.
  expect(calls).toHaveLength(0);
  await settle();
  expect(calls.map((x) => x.items)).toEqual([[1, 2]]);
  const later = [c.submit(3), c.submit(4), c.submit(5)];
  await settle();
  // Their call must start after they arrived, so it waits for the one in flight.
  expect(calls).toHaveLength(1);
  calls[0].release([10, 20]);
  expect(await Promise.all(first)).toEqual([10, 20]);
  await settle();
  expect(calls.map((x) => x.items)).toEqual([[1, 2], [3, 4, 5]]);
  calls[1].release([30, 40, 50]);
  expect(await Promise.all(later)).toEqual([30, 40, 50]);
});

test("batches stop at maxBatch and run up to maxInFlight at once", async () => {
  const { calls, run } = controlled();
  const c = new Coalescer(run, { maxBatch: 2, maxInFlight: 2 });
  const all = [1, 2, 3, 4, 5].map((n) => c.submit(n));
  await settle();
  // Two calls of two; 5 waits for a free slot.
  expect(calls.map((x) => x.items)).toEqual([[1, 2], [3, 4]]);
  calls[1].release([3, 4]);
  await settle();
  expect(calls.map((x) => x.items)).toEqual([[1, 2], [3, 4], [5]]);
  calls[0].release([1, 2]);
  calls[2].release([5]);
  expect(await Promise.all(all)).toEqual([1, 2, 3, 4, 5]);
});

test("key: a call holds the items of the oldest item's key, in order; the others wait for the next calls", async () => {
  const { calls, run } = controlled();
  // Odd and even numbers are two keys (on a cluster, the appender's tenants).
  const c = new Coalescer(run, { maxBatch: 2, maxInFlight: 3, key: (n) => String(n % 2) });
  const all = [1, 2, 3, 4, 5, 6].map((n) => c.submit(n));
  await settle();
  expect(calls.map((x) => x.items)).toEqual([[1, 3], [2, 4], [5]]);
  for (const call of calls) call.release(call.items);
  await settle();
  expect(calls.map((x) => x.items)).toEqual([[1, 3], [2, 4], [5], [6]]);
  calls[3].release([6]);
  expect(await Promise.all(all)).toEqual([1, 2, 3, 4, 5, 6]);
});

test("linger: while a call is in flight, items wait for others up to linger ms; a lone item and a full batch never wait", async () => {
  const { calls, run } = controlled();
  const c = new Coalescer(run, { maxBatch: 3, maxInFlight: 2, linger: 50 });
  const lone = c.submit(1);
  await settle();
  // Nothing in flight: at once.
  expect(calls.map((x) => x.items)).toEqual([[1]]);
  const held = [c.submit(2)];
  await settle();
  // A call in flight: it waits, though a second may go out.
  expect(calls).toHaveLength(1);
  held.push(c.submit(3));
  await Bun.sleep(70);
  // After the linger, together, beside the call in flight.
  expect(calls.map((x) => x.items)).toEqual([[1], [2, 3]]);
  const later = c.submit(4);
  calls[1].release([20, 30]);
  expect(await Promise.all(held)).toEqual([20, 30]);
  await settle();
  // One call still in flight: 4 keeps waiting; when none is, it goes at once.
  expect(calls).toHaveLength(2);
  calls[0].release([10]);
  expect(await lone).toBe(10);
  await settle();
  expect(calls.map((x) => x.items)).toEqual([[1], [2, 3], [4]]);
  calls[2].release([40]);
  expect(await later).toBe(40);
  // A full batch goes at once, whatever is in flight.
  const first = c.submit(5);
  await settle();
  const full = [6, 7, 8].map((n) => c.submit(n));
  await settle();
  expect(calls.slice(3).map((x) => x.items)).toEqual([[5], [6, 7, 8]]);
  calls[3].release([50]);
  calls[4].release([60, 70, 80]);
  expect(await Promise.all([first, ...full])).toEqual([50, 60, 70, 80]);
});

test("an Error result rejects its item only; a failed call rejects its whole batch and not the next", async () => {
  const { calls, run } = controlled();
  const c = new Coalescer(run, { maxBatch: 10, maxInFlight: 1 });
  const a = c.submit(1);
  await settle();
  const [b, d] = [c.submit(2), c.submit(3)];
  calls[0].release([new Error("refused")]);
  await expect(a).rejects.toThrow("refused");
  await settle();
  calls[1].release(new Error("database down"));
  const [rb, rd] = await Promise.allSettled([b, d]);
  expect(rb).toEqual({ status: "rejected", reason: expect.objectContaining({ message: "database down" }) });
  expect(rd).toEqual({ status: "rejected", reason: expect.objectContaining({ message: "database down" }) });
  await settle();
  const e = c.submit(4);
  await settle();
  calls[2].release([]);
  await expect(e).rejects.toThrow("no result");
});
