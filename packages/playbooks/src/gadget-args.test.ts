import { describe, expect, it } from "vitest";
import { renderArgs } from "./gadget-args.js";

describe("renderArgs", () => {
  it("fills string leaves as text and keeps other leaves", () => {
    expect(
      renderArgs({ service: "{{service}}", window: "5m", limit: 10, nested: { query: "svc={{service}}", on: true, none: null } }, { service: "a&b" }),
    ).toEqual({ service: "a&b", window: "5m", limit: 10, nested: { query: "svc=a&b", on: true, none: null } });
  });

  it("leaves out the leaves whose attributes are missing", () => {
    expect(
      renderArgs({ service: "{{service}}", env: "{{env}}", hosts: ["{{host}}", "fixed", "{{service}}"], both: "{{service}} {{env}}" }, { service: "s" }),
    ).toEqual({ service: "s", hosts: ["fixed", "s"] });
  });

  it("keeps a __proto__ key as data", () => {
    const rendered = renderArgs(JSON.parse('{"__proto__": {"polluted": "{{x}}"}}') as Record<string, unknown>, { x: "y" });
    expect(Object.hasOwn(rendered, "__proto__")).toBe(true);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
