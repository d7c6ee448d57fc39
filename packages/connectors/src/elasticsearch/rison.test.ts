import { describe, expect, it } from "vitest";
import { rison } from "./rison.js";

describe("rison", () => {
  it.each([
    [null, "!n"],
    [true, "!t"],
    [false, "!f"],
    [0, "0"],
    [-1.5, "-1.5"],
    ["", "''"],
    ["kuery", "kuery"],
    ["logs-*", "'logs-*'"],
    ["2026-11-20T13:08:00.000Z", "'2026-11-20T13:08:00.000Z'"],
    ["it's !", "'it!'s !!'"],
    ["a b", "'a b'"],
    ["-x", "'-x'"],
    ["1a", "'1a'"],
    ['service:"checkout"', "'service:\"checkout\"'"],
    [[], "!()"],
    [["a", 1, [true]], "!(a,1,!(!t))"],
    [{}, "()"],
    [{ time: { from: "now-1h", to: "now" } }, "(time:(from:now-1h,to:now))"],
    [{ "a b": "c", "@x": 1 }, "('a b':c,'@x':1)"],
  ])("writes %j as %s", (value, expected) => {
    expect(rison(value)).toBe(expected);
  });

  it("refuses a number JSON cannot hold", () => {
    expect(() => rison(Number.NaN)).toThrow(RangeError);
    expect(() => rison(Infinity)).toThrow("rison cannot write Infinity");
  });
});
