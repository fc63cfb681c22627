// Something costly made on first use (a module loaded, a transport made) rather than at start-up.
// A failed attempt is not kept: the next use tries again.
export interface Lazy<T> {
  /** The value, made by the first call (and again after a failure). */
  get(): Promise<T>;
  /** The attempt under way or made, without starting one. */
  started(): Promise<T> | undefined;
}

export function lazily<T>(make: () => Promise<T>): Lazy<T> {
  let made: Promise<T> | undefined;
  return {
    get: () =>
      (made ??= make().catch((err: unknown) => {
        made = undefined;
        throw err;
      })),
    started: () => made,
  };
}
