import { describe, expect, it } from "vitest";
import { LoadShedder } from "./load-shedder.js";

function deferred() {
  let resolve = () => {};
  const promise = new Promise<void>((done) => {
    resolve = done;
  });
  return { promise, resolve };
}

const refusal = (detail: string) => ({ code: "too_many_requests", detail, headers: { "Retry-After": "1" } });

describe("LoadShedder", () => {
  it("refuses at once beyond maxInFlight when none may wait, and counts a batch's items", async () => {
    const shedder = new LoadShedder(3);
    const held = deferred();
    const running = shedder.run(2, () => held.promise);
    expect(shedder.inFlight).toBe(2);
    await expect(shedder.run(2, async () => "no room")).rejects.toMatchObject(refusal("Too many executions in flight; retry shortly"));
    expect(await shedder.run(1, async () => "fits")).toBe("fits");
    held.resolve();
    await running;
    expect(shedder.inFlight).toBe(0);
  });

  it("lets up to maxWaiting callers wait for room, first come first served, and refuses the next", async () => {
    const shedder = new LoadShedder(1, { maxWaiting: 2, refusal: "Too many pages" });
    const started: string[] = [];
    const first = deferred();
    const work = (name: string, until?: Promise<void>) => async () => {
      started.push(name);
      await until;
      return name;
    };
    const a = shedder.run(1, work("a", first.promise));
    const b = shedder.run(1, work("b"));
    const c = shedder.run(1, work("c"));
    await expect(shedder.run(1, work("d"))).rejects.toMatchObject(refusal("Too many pages"));
    expect(started).toEqual(["a"]);
    first.resolve();
    expect(await Promise.all([a, b, c])).toEqual(["a", "b", "c"]);
    expect(started).toEqual(["a", "b", "c"]);
    expect(shedder.inFlight).toBe(0);
  });

  it("frees the room of work that failed for the next waiting caller", async () => {
    const shedder = new LoadShedder(1, { maxWaiting: 1 });
    const failing = deferred();
    const a = shedder.run(1, async () => {
      await failing.promise;
      throw new Error("redis went away");
    });
    const b = shedder.run(1, async () => "b");
    failing.resolve();
    await expect(a).rejects.toThrow("redis went away");
    expect(await b).toBe("b");
  });

  it("refuses more than maxInFlight at once rather than let it wait forever", async () => {
    const shedder = new LoadShedder(2, { maxWaiting: 5 });
    await expect(shedder.run(3, async () => "never fits")).rejects.toMatchObject(refusal("Too many executions in flight; retry shortly"));
  });
});
