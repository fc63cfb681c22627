import { expect, test } from "bun:test";
import { BoundedMap } from "../src/bounded-map.ts";

test("a BoundedMap forgets everything when a new key would take it past its bound, not on an update", () => {
  const m = new BoundedMap<string, number>(2);
  m.set("a", 1).set("b", 2);
  m.set("b", 3);
  expect([...m.entries()]).toEqual([["a", 1], ["b", 3]]);
  m.set("c", 4);
  expect([...m.entries()]).toEqual([["c", 4]]);
});
