// A worker's handlers come from its catalog: one for every job, typed by the job's payload and reply.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { handleCatalog, type JobCatalog } from "./job-handlers.js";

const CATALOG = {
  ask: {
    name: "ask",
    queue: "questions",
    batchLane: "questions-behind",
    schema: z.object({ question: z.string(), deadline: z.number() }),
    reply: { schema: z.object({ answer: z.string() }), label: "question" },
    options: { attempts: 1 },
  },
  tell: { name: "tell", queue: "notices", background: true, schema: z.object({ notice: z.string() }), options: { attempts: 3, attemptTimeoutMs: 1_000 } },
} satisfies JobCatalog;

const signal = new AbortController().signal;

describe("handleCatalog", () => {
  it("gives each job of the catalog its handler, its queues and its timeout", async () => {
    const told: string[] = [];
    const handlers = handleCatalog(CATALOG, {
      ask: async ({ question }) => ({ answer: `${question}: yes` }),
      tell: async ({ notice }) => {
        told.push(notice);
      },
    });

    expect(handlers.map(({ name, queue, batchLane, background, options, awaitedAs }) => ({ name, queue, batchLane, background, options, awaitedAs }))).toEqual([
      { name: "ask", queue: "questions", batchLane: "questions-behind", background: false, options: { attempts: 1 }, awaitedAs: "question" },
      { name: "tell", queue: "notices", batchLane: undefined, background: true, options: { attempts: 3, attemptTimeoutMs: 1_000 }, awaitedAs: undefined },
    ]);
    const [ask, tell] = handlers;
    const asked = ask?.accept({ question: "ready", deadline: 0 });
    expect(asked !== undefined && "run" in asked ? await asked.run({ signal, jobId: "1", attempt: 1 }) : asked).toEqual({ answer: "ready: yes" });
    const toldRun = tell?.accept({ notice: "done" });
    expect(toldRun !== undefined && "run" in toldRun ? await toldRun.run({ signal, jobId: "2", attempt: 1 }) : toldRun).toBeUndefined();
    expect(told).toEqual(["done"]);
    expect(tell?.accept({ notice: 1 })).toEqual({ problems: ["notice: Invalid input: expected string, received number"] });
  });

  it("refuses a catalog that lists a job under another name than its own", () => {
    expect(() => handleCatalog({ asked: CATALOG.ask }, { asked: async () => ({ answer: "" }) })).toThrow('the catalog lists job "ask" as "asked"');
  });

  it("does not compile without a handler for every job, or with one of the wrong payload or reply", () => {
    // @ts-expect-error: no handler for `tell`
    expect(() => handleCatalog(CATALOG, { ask: async () => ({ answer: "" }) })).toBeDefined();
    handleCatalog(CATALOG, {
      // @ts-expect-error: `ask`'s reply has an answer
      ask: async () => ({ reply: "" }),
      // @ts-expect-error: `tell`'s payload has no question
      tell: async ({ question }) => {
        void question;
      },
    });
  });
});
