import { EventEmitter } from "node:events";

/** Lets a test wait for a state a fake reaches, rather than for time. */
export interface ChangeSignal {
  /** Call after each change of the state. */
  changed(): void;
  /** Resolves once `reached()` holds: at once if it already does, else at the first change after which it does. */
  until(reached: () => boolean): Promise<void>;
}

export function createChangeSignal(): ChangeSignal {
  const emitter = new EventEmitter();
  return {
    changed: () => {
      emitter.emit("change");
    },
    until: (reached) =>
      new Promise<void>((resolve) => {
        const check = () => {
          if (!reached()) return;
          emitter.off("change", check);
          resolve();
        };
        emitter.on("change", check);
        check();
      }),
  };
}
