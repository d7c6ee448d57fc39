import { AppError } from "./errors.js";

/**
 * Admission control for one API instance: at most `maxInFlight` executions (a batch counts each item)
 * wait on the queue at once. Beyond that the caller gets 429 with Retry-After instead of piling up
 * sockets and timers while the workers are saturated.
 */
export class Admission {
  #inFlight = 0;

  constructor(readonly maxInFlight: number) {}

  get inFlight(): number {
    return this.#inFlight;
  }

  /** Runs `work` counting `count` executions in flight, or throws the 429 when they do not fit. */
  async run<T>(count: number, work: () => Promise<T>): Promise<T> {
    if (this.#inFlight + count > this.maxInFlight) {
      throw new AppError("too_many_requests", "Too many executions in flight; retry shortly", { "Retry-After": "1" });
    }
    this.#inFlight += count;
    try {
      return await work();
    } finally {
      this.#inFlight -= count;
    }
  }
}
