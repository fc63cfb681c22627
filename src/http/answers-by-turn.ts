// Answers that are ready in the turn of the event loop their request arrived in leave together at
// the end of that turn (docs/performance.md section 23).
//
// A request that needs no I/O (a simulate, a refusal) is answered inside the callback that read it,
// so under load the service alternates one read and one write per request, and every write wakes
// the client's reader on its own. Held to the end of the turn, the answers of all the requests
// read in that turn are written one after the other, as Redis writes its replies before it sleeps.
// Answers that waited for I/O (a database call) already leave in a turn of their own, together
// with the others that waited for the same call, and are not held again. A lone request waits one
// turn of an otherwise idle loop.
import { setImmediate } from "node:timers";

export function answersByTurn<A extends unknown[]>(handle: (...args: A) => Promise<Response>): (...args: A) => Promise<Response> {
  let turn = 0;
  let scheduled = false;
  let held: (() => void)[] = [];
  const endTurn = () => {
    scheduled = false;
    turn++;
    const release = held;
    held = [];
    for (const answer of release) answer();
  };
  return (...args) => {
    if (!scheduled) {
      scheduled = true;
      setImmediate(endTurn);
    }
    const arrived = turn;
    return handle(...args).then((response) =>
      turn !== arrived ? response : new Promise<Response>((resolve) => held.push(() => resolve(response))),
    );
  };
}
