import type { JsonObservation } from "@pes/contracts";
import { describe, expect, it } from "vitest";
import { shortAnswer } from "./evidence-text.js";
import { readJson, valueAt } from "./json-reading.js";

describe("valueAt", () => {
  const document = { a: { b: [{ c: 1 }, { c: null }], "": 2 }, list: [0, false] };
  it.each([
    ["a.b.0.c", 1],
    ["a.b.1.c", null],
    ["list.1", false],
    ["a.b.2.c", undefined],
    ["a.b.x", undefined],
    ["a.toString", undefined],
    ["list.length", undefined],
    ["missing", undefined],
  ])("%s → %j", (path, expected) => {
    expect(valueAt(document, path)).toBe(expected);
  });
});

describe("readJson: a JSON answer read where the action says", () => {
  const window = { start: new Date("2026-11-20T13:08:00Z"), time: new Date("2026-11-20T14:08:00Z"), end: new Date("2026-11-20T14:23:00Z") };
  const read = (answer: unknown, answerField: string, change?: JsonObservation["change"]) =>
    readJson(
      { kind: "json", answer, answerField, ...(change === undefined ? {} : { change }) },
      { action: "Last deploy", window, link: "https://deploys.example/checkout" },
    );
  const deploy = { kind: "deploy", timeField: "deployedAt", subject: "checkout" } as const;

  it("answers the value at the field, as text; a long one whole, its short answer cut", () => {
    expect(read({ version: "v1.2.3" }, "version")).toEqual({ kind: "answer", action: "Last deploy", text: "v1.2.3", link: "https://deploys.example/checkout" });
    expect(read({ data: { items: [{ state: { ok: true, n: 3 } }] } }, "data.items.0.state")).toMatchObject({ text: '{"ok":true,"n":3}' });
    const long = read({ version: "x".repeat(1000) }, "version");
    expect(long).toMatchObject({ kind: "answer", text: "x".repeat(1000) });
    expect(shortAnswer(long, window.time)).toHaveLength(300);
    expect(shortAnswer(long, window.time).endsWith("…")).toBe(true);
  });

  it("reads an empty list or null where the answer should be as no entries, not as a failure", () => {
    for (const [answer, field, change] of [
      [{ items: [], total: 0 }, "items"],
      [{ items: [], total: 0 }, "items.0.version"],
      [{ items: null }, "items.0.version"],
      [{ items: [] }, "items.0.version", { kind: "deploy", timeField: "items.0.at", subject: "checkout" }],
    ] as const) {
      const found = read(answer, field, change);
      expect(found).toMatchObject({ kind: "none", action: "Last deploy", what: "entries" });
      expect(shortAnswer(found, window.time)).toBe("Last deploy: no entries");
    }
    // A field that is simply not there is still a broken answer.
    expect(read({ items: [], total: 0 }, "total.x")).toMatchObject({ kind: "failed", reason: "the answer has no field total.x" });
    expect(read({ other: 1 }, "version")).toMatchObject({ kind: "failed", reason: "the answer has no field version" });
  });

  it("reads a change at the time the answer gives", () => {
    const found = read({ version: "v1.2.3", deployedAt: "2026-11-20T14:01:00Z" }, "version", deploy);
    expect(found).toEqual({
      kind: "change",
      action: "Last deploy",
      link: "https://deploys.example/checkout",
      change: "deploy",
      subject: "checkout",
      detail: "v1.2.3",
      at: new Date("2026-11-20T14:01:00Z"),
    });
    expect(shortAnswer(found, window.time)).toBe("Last deploy: deploy of checkout to v1.2.3 at 14:01 UTC");
  });

  it.each([
    ["an offset", "2026-11-20T15:01:00+01:00"],
    ["seconds since the epoch", Date.parse("2026-11-20T14:01:00Z") / 1000],
    ["milliseconds since the epoch", Date.parse("2026-11-20T14:01:00Z")],
  ])("reads a time with %s", (_case, deployedAt) => {
    expect(read({ version: "v1", deployedAt }, "version", { ...deploy, kind: "restart" })).toMatchObject({
      kind: "change",
      change: "restart",
      at: new Date("2026-11-20T14:01:00Z"),
    });
  });

  it.each([
    ["no time", { version: "v1" }, "the answer has no field deployedAt"],
    [
      "a time without an offset",
      { version: "v1", deployedAt: "2026-11-20T14:01:00" },
      "the answer's deployedAt is not a time (an ISO 8601 date-time or seconds since the epoch)",
    ],
    [
      "a time that is not one",
      { version: "v1", deployedAt: "yesterday" },
      "the answer's deployedAt is not a time (an ISO 8601 date-time or seconds since the epoch)",
    ],
    ["no version", { deployedAt: "2026-11-20T14:01:00Z" }, "the answer has no field version"],
  ])("fails on an answer with %s", (_case, answer, reason) => {
    expect(read(answer, "version", deploy)).toEqual({ kind: "failed", action: "Last deploy", link: "https://deploys.example/checkout", reason });
  });
});
