import { describe, expect, it } from "vitest";
import { quantityOf } from "./quantities.js";

describe("quantityOf", () => {
  it("reads Kubernetes quantities in their base unit", () => {
    expect(quantityOf("250m")).toBe(0.25);
    expect(quantityOf("2")).toBe(2);
    expect(quantityOf("1.5Gi")).toBe(1.5 * 2 ** 30);
    expect(quantityOf("64Mi")).toBe(64 * 2 ** 20);
    expect(quantityOf("1G")).toBe(1e9);
    expect(quantityOf("lots")).toBeUndefined();
    expect(quantityOf(undefined)).toBeUndefined();
  });
});
