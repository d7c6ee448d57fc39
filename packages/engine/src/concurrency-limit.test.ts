import { describe, expect, it } from "vitest";
import { setImmediate as turn } from "node:timers/promises";
import { createConcurrencyLimit } from "./concurrency-limit.js";

describe("createConcurrencyLimit", () => {
  it("starts at most max tasks, then one per finished task, in order", async () => {
    const limit = createConcurrencyLimit(2);
    const started: number[] = [];
    const finish: Array<(value: number) => void> = [];
    const results = [0, 1, 2, 3, 4].map((index) =>
      limit.run(
        () =>
          new Promise<number>((resolve) => {
            started.push(index);
            finish[index] = resolve;
          }),
      ),
    );
    await turn();
    expect(started).toEqual([0, 1]);
    finish[1]?.(1);
    await turn();
    expect(started).toEqual([0, 1, 2]);
    finish[0]?.(0);
    finish[2]?.(2);
    await turn();
    expect(started).toEqual([0, 1, 2, 3, 4]);
    finish[3]?.(3);
    finish[4]?.(4);
    expect(await Promise.all(results)).toEqual([0, 1, 2, 3, 4]);
  });

  it("frees the slot of a task that fails", async () => {
    const limit = createConcurrencyLimit(1);
    await expect(limit.run(() => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
    await expect(limit.run(() => Promise.resolve("next"))).resolves.toBe("next");
  });

  it("rejects a limit that is not a positive integer", () => {
    expect(() => createConcurrencyLimit(0)).toThrow(RangeError);
    expect(() => createConcurrencyLimit(1.5)).toThrow(RangeError);
  });
});
