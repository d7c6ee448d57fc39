import { describe, expect, it } from "vitest";
import { canonicalJson } from "./canonical-json.js";

describe("canonicalJson", () => {
  it("writes the same text whatever the order of the keys, leaving out undefined members", () => {
    expect(canonicalJson({ b: [1, { d: 2, c: undefined, a: "x" }], a: null })).toBe('{"a":null,"b":[1,{"a":"x","d":2}]}');
    expect(canonicalJson({ a: 1, b: 2 })).toBe(canonicalJson({ b: 2, a: 1 }));
  });
});
