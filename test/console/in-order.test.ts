// The queue that keeps playwright-core's in-process messages in order (test/helpers/playwright.ts).
import { expect, test } from "bun:test";
import { inOrder } from "../helpers/playwright.ts";

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

test("messages arrive in the order they were sent, none before the next turn", async () => {
  const got: number[] = [];
  const send = inOrder((m) => got.push(m as number));
  for (let i = 0; i < 1000; i++) send(i);
  expect(got).toEqual([]);
  await turn();
  await turn();
  expect(got).toEqual([...Array(1000).keys()]);
});

test("a message sent while delivering goes behind those already queued", async () => {
  const got: string[] = [];
  const send: (m: unknown) => void = inOrder((m) => {
    got.push(m as string);
    if (m === "a") send("c");
  });
  send("a");
  send("b");
  for (let i = 0; i < 4; i++) await turn();
  expect(got).toEqual(["a", "b", "c"]);
});
