import { expect, test } from "bun:test";
import { setImmediate } from "node:timers";
import { answersByTurn } from "../../src/http/answers-by-turn.ts";

const microtasks = async () => {
  for (let i = 0; i < 20; i++) await Promise.resolve();
};
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

test("answers ready in their arrival turn leave together at its end, in order", async () => {
  const handle = answersByTurn(async (body: string) => new Response(body));
  const order: string[] = [];
  const answers = ["a", "b", "c"].map((body) => handle(body).then(async (r) => order.push(await r.text())));
  await microtasks();
  expect(order).toEqual([]);
  await nextTurn();
  await Promise.all(answers);
  expect(order).toEqual(["a", "b", "c"]);
});

test("an answer that waited for I/O is not held again", async () => {
  const events: string[] = [];
  const handle = answersByTurn(
    () =>
      new Promise<Response>((resolve) =>
        setTimeout(() => {
          resolve(new Response("late"));
          setImmediate(() => events.push("next turn"));
        }, 5),
      ),
  );
  const answer = handle().then(() => events.push("answered"));
  await answer;
  await nextTurn();
  await nextTurn();
  expect(events).toEqual(["answered", "next turn"]);
});

test("a later request's answer waits for its own turn, not for the one before", async () => {
  const handle = answersByTurn(async (body: string) => new Response(body));
  const first = handle("first");
  await nextTurn();
  expect(await (await first).text()).toBe("first");
  const second = handle("second");
  let done = false;
  void second.then(() => (done = true));
  await microtasks();
  expect(done).toBe(false);
  await nextTurn();
  await microtasks();
  expect(done).toBe(true);
});

test("a failure passes through", async () => {
  const handle = answersByTurn(async () => {
    throw new Error("boom");
  });
  await expect(handle()).rejects.toThrow("boom");
});
