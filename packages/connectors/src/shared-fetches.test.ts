import type { Observation } from "@pes/contracts";
import { describe, expect, it } from "vitest";
import { createSharedFetches } from "./shared-fetches.js";

/** A fetch the test ends by hand (call by call), counting its calls and keeping the signal each ran on. */
function controlledFetch() {
  const calls: AbortSignal[] = [];
  const answers: Array<(found: Observation) => void> = [];
  const fetch = (signal: AbortSignal) => {
    calls.push(signal);
    return new Promise<Observation>((resolve) => answers.push(resolve));
  };
  return { calls, fetch, answer: (call: number, text: string) => answers[call]?.({ kind: "text", text }) };
}

describe("createSharedFetches", () => {
  it("asks once for callers of the same key in flight, and again once it has answered", async () => {
    const shared = createSharedFetches();
    const { calls, fetch, answer } = controlledFetch();
    const first = shared.run("q", new AbortController().signal, fetch);
    const second = shared.run("q", new AbortController().signal, fetch);
    const other = shared.run("other", new AbortController().signal, fetch);
    expect(calls).toHaveLength(2);
    answer(1, "other answer");
    answer(0, "q answer");
    await expect(other).resolves.toMatchObject({ text: "other answer" });
    await expect(first).resolves.toMatchObject({ text: "q answer" });
    await expect(second).resolves.toMatchObject({ text: "q answer" });
    const third = shared.run("q", new AbortController().signal, fetch);
    expect(calls).toHaveLength(3);
    answer(2, "later");
    await expect(third).resolves.toMatchObject({ text: "later" });
  });

  it("keeps the fetch going for the others when one caller gives up, and stops it when all have", async () => {
    const shared = createSharedFetches();
    const { calls, fetch, answer } = controlledFetch();
    const quitting = new AbortController();
    const staying = new AbortController();
    const quitter = shared.run("q", quitting.signal, fetch);
    const stayer = shared.run("q", staying.signal, fetch);
    quitting.abort(new DOMException("timed out", "TimeoutError"));
    await expect(quitter).rejects.toMatchObject({ name: "TimeoutError" });
    expect(calls[0]?.aborted).toBe(false);
    answer(0, "shared");
    await expect(stayer).resolves.toMatchObject({ text: "shared" });

    const alone = new AbortController();
    const lone = shared.run("again", alone.signal, fetch);
    alone.abort(new DOMException("timed out", "TimeoutError"));
    await expect(lone).rejects.toMatchObject({ name: "TimeoutError" });
    expect(calls[1]?.aborted).toBe(true);
    expect(calls[1]?.reason).toMatchObject({ name: "TimeoutError" });
  });
});
