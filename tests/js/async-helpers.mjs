// Promise helpers shared by the client tests: controllable deferreds and a microtask drain.

/** A promise with its resolve/reject exposed, to script when an RPC answers. */
export function deferred() {
  let resolve;
  let reject;
  const promise = new Promise((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Let every pending promise continuation run (microtasks only, no timers). */
export async function settle() {
  for (let i = 0; i < 50; i += 1) await Promise.resolve();
}
