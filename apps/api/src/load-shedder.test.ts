import { describe, expect, it } from "vitest";
import { Admission } from "./admission.js";

function deferred() {
  let resolve = () => {};
  const promise = new Promise<void>((done) => {
    resolve = done;
  });
  return { promise, resolve };
}

const refusal = (detail: string) => ({ code: "too_many_requests", detail, headers: { "Retry-After": "1" } });

describe("Admission", () => {
  it("refuses at once beyond maxInFlight when none may wait, and counts a batch's items", async () => {
    const admission = new Admission(3);
    const held = deferred();
    const running = admission.run(2, () => held.promise);
    expect(admission.inFlight).toBe(2);
    await expect(admission.run(2, async () => "no room")).rejects.toMatchObject(refusal("Too many executions in flight; retry shortly"));
    expect(await admission.run(1, async () => "fits")).toBe("fits");
    held.resolve();
    await running;
    expect(admission.inFlight).toBe(0);
  });

  it("lets up to maxWaiting callers wait for room, first come first served, and refuses the next", async () => {
    const admission = new Admission(1, { maxWaiting: 2, refusal: "Too many pages" });
    const started: string[] = [];
    const first = deferred();
    const work = (name: string, until?: Promise<void>) => async () => {
      started.push(name);
      await until;
      return name;
    };
    const a = admission.run(1, work("a", first.promise));
    const b = admission.run(1, work("b"));
    const c = admission.run(1, work("c"));
    await expect(admission.run(1, work("d"))).rejects.toMatchObject(refusal("Too many pages"));
    expect(started).toEqual(["a"]);
    first.resolve();
    expect(await Promise.all([a, b, c])).toEqual(["a", "b", "c"]);
    expect(started).toEqual(["a", "b", "c"]);
    expect(admission.inFlight).toBe(0);
  });

  it("frees the room of work that failed for the next waiting caller", async () => {
    const admission = new Admission(1, { maxWaiting: 1 });
    const failing = deferred();
    const a = admission.run(1, async () => {
      await failing.promise;
      throw new Error("redis went away");
    });
    const b = admission.run(1, async () => "b");
    failing.resolve();
    await expect(a).rejects.toThrow("redis went away");
    expect(await b).toBe("b");
  });

  it("refuses more than maxInFlight at once rather than let it wait forever", async () => {
    const admission = new Admission(2, { maxWaiting: 5 });
    await expect(admission.run(3, async () => "never fits")).rejects.toMatchObject(refusal("Too many executions in flight; retry shortly"));
  });
});
