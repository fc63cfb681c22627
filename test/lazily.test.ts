import { expect, test } from "bun:test";
import { lazily } from "../src/lazily.ts";

test("lazily: made on the first get, once; a failed attempt is not kept", async () => {
  let calls = 0;
  const value = lazily(async () => {
    calls++;
    if (calls === 1) throw new Error("first attempt fails");
    return calls;
  });
  expect(value.started()).toBeUndefined();
  expect(calls).toBe(0);
  await expect(value.get()).rejects.toThrow("first attempt fails");
  expect(value.started()).toBeUndefined();
  expect(await Promise.all([value.get(), value.get()])).toEqual([2, 2]);
  expect(await value.started()).toBe(2);
  expect(calls).toBe(2);
});
