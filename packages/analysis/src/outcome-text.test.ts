import { describe, expect, it } from "vitest";
import { truncate } from "./outcome-text.js";

describe("truncate", () => {
  it("cuts long text to the limit with an ellipsis", () => {
    expect(truncate("short")).toBe("short");
    const long = truncate("x".repeat(400));
    expect(long).toHaveLength(300);
    expect(long.endsWith("…")).toBe(true);
    expect(truncate("abcdef", 4)).toBe("abc…");
  });
});
