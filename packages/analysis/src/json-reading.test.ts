import { describe, expect, it } from "vitest";
import { valueAt } from "./json-reading.js";

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
