// playwright-core in process under Bun: its client and its server hand each other every message
// through a setImmediate of its own. Under load, Bun 1.4 has run some of those callbacks tens of
// milliseconds after callbacks scheduled later (seen with a sequence number stamped on each message
// as it was sent: the server sent a Response's __create__, then "requestFinished" naming it, and
// the client received them the other way round). The client then throws "Object with guid
// response@... was not bound in the connection" outside any test step, and the test in progress
// fails. One first-in-first-out queue per direction, drained by one immediate at a time, keeps the
// order whatever the runtime does with the immediates.

type Deliver = (message: unknown) => unknown;

/** A function that delivers its messages in the order it was given them, a turn of the event loop later. */
export function inOrder(deliver: Deliver): (message: unknown) => void {
  const queue: unknown[] = [];
  let scheduled = false;
  const drain = () => {
    scheduled = false;
    // Only what was queued before this turn: a message sent while delivering waits for the next.
    let count = queue.length;
    try {
      while (count-- > 0) deliver(queue.shift());
    } finally {
      // A delivery that throws (the error still reaches the runtime) does not strand the rest.
      if (queue.length > 0 && !scheduled) {
        scheduled = true;
        setImmediate(drain);
      }
    }
  };
  return (message) => {
    queue.push(message);
    if (!scheduled) {
      scheduled = true;
      setImmediate(drain);
    }
  };
}

interface InProcessConnection {
  dispatch(message: unknown): unknown;
  onmessage: (message: unknown) => void;
  toImpl?: (connection: unknown) => InProcessConnection | undefined;
}

/** Makes the in-process playwright-core behind `browserType` deliver its messages in order. */
export function keepPlaywrightMessagesInOrder(browserType: object): void {
  const client = (browserType as { _connection?: InProcessConnection })._connection;
  const server = client?.toImpl?.(client);
  if (!client || !server) throw new Error("playwright-core is not running in this process: no messages to keep in order");
  server.onmessage = inOrder((message) => client.dispatch(message));
  client.onmessage = inOrder((message) => server.dispatch(message));
}
