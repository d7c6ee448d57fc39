/** Runs at most `max` tasks at a time; the rest wait in the order they were submitted. */
export interface ConcurrencyLimit {
  run<T>(task: () => Promise<T>): Promise<T>;
}

/**
 * A counting semaphore: small enough to read in one go, which is why it is not a dependency.
 * @throws RangeError when `max` is not a positive integer.
 */
export function createConcurrencyLimit(max: number): ConcurrencyLimit {
  if (!Number.isInteger(max) || max < 1) throw new RangeError(`concurrency limit must be a positive integer, got ${max}`);
  let active = 0;
  const waiting: Array<() => void> = [];

  const release = () => {
    active -= 1;
    const next = waiting.shift();
    if (next !== undefined) {
      active += 1;
      next();
    }
  };

  return {
    async run<T>(task: () => Promise<T>): Promise<T> {
      if (active < max) active += 1;
      else await new Promise<void>((resolve) => waiting.push(resolve));
      try {
        return await task();
      } finally {
        release();
      }
    },
  };
}
