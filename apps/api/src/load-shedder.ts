import { AppError } from "./errors.js";

export interface LoadShedderOptions {
  /** How many callers may wait for room, first come first served, before the next is refused. Default 0: none wait. */
  maxWaiting?: number;
  /** The 429's message. */
  refusal?: string;
}

/**
 * Load shedding for one API instance, whatever the organizations' limits: at most `maxInFlight` units of
 * work (executions waiting on the queue, a batch counting each item; or batch pages being read and sent)
 * at once. Beyond that, and beyond `maxWaiting` callers already waiting, the caller gets 429 with
 * Retry-After instead of piling up sockets, timers and memory while the process is saturated.
 */
export class LoadShedder {
  #inFlight = 0;
  readonly #waiting: { count: number; start: () => void }[] = [];
  readonly #maxWaiting: number;
  readonly #refusal: string;

  constructor(
    readonly maxInFlight: number,
    options: LoadShedderOptions = {},
  ) {
    this.#maxWaiting = options.maxWaiting ?? 0;
    this.#refusal = options.refusal ?? "Too many executions in flight; retry shortly";
  }

  get inFlight(): number {
    return this.#inFlight;
  }

  /** Runs `work` counting `count` units in flight, once they fit; or throws the 429 when they cannot wait. */
  async run<T>(count: number, work: () => Promise<T>): Promise<T> {
    // Nobody overtakes a caller already waiting.
    if (this.#waiting.length > 0 || this.#inFlight + count > this.maxInFlight) {
      if (count > this.maxInFlight || this.#waiting.length >= this.#maxWaiting) {
        throw new AppError("too_many_requests", this.#refusal, { "Retry-After": "1" });
      }
      await new Promise<void>((start) => this.#waiting.push({ count, start }));
    } else {
      this.#inFlight += count;
    }
    try {
      return await work();
    } finally {
      this.#inFlight -= count;
      this.#startWaiting();
    }
  }

  #startWaiting(): void {
    for (let next = this.#waiting[0]; next !== undefined && this.#inFlight + next.count <= this.maxInFlight; next = this.#waiting[0]) {
      this.#waiting.shift();
      this.#inFlight += next.count;
      next.start();
    }
  }
}
