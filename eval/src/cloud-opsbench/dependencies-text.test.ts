import { describe, expect, it } from "vitest";
import { callsOfDependencies, serviceGraphOfDependencies } from "./dependencies-text.js";

// Written here in the shape of GetServiceDependencies' answers; no case's data.
const SHOP = `[Service]: shop (Entrypoint)
[Upstream (Called By)]: (User Traffic)
[Downstream (Calls)]:
shop
├── basket
│   └── basket-db       <-- (Database)
└── pricing`;

const PRICING = `[Service]: pricing
[Upstream (Called By)]: shop, orders
[Downstream (Calls)]:
(None - Leaf Service)`;

describe("GetServiceDependencies as calls", () => {
  it("reads the tree under Downstream, each name called by the one it hangs from, notes and the entrypoint mark aside", () => {
    expect(callsOfDependencies("shop", SHOP)).toEqual([
      { caller: "shop", callee: "basket" },
      { caller: "basket", callee: "basket-db" },
      { caller: "shop", callee: "pricing" },
    ]);
  });

  it("reads the callers of a leaf, user traffic and the leaf's placeholder aside", () => {
    expect(callsOfDependencies("pricing", PRICING)).toEqual([
      { caller: "shop", callee: "pricing" },
      { caller: "orders", callee: "pricing" },
    ]);
  });

  it("draws every answer into one graph, each call once, and none from text it does not know", () => {
    const graph = serviceGraphOfDependencies(
      new Map([
        ["shop", SHOP],
        ["pricing", PRICING],
      ]),
    );
    expect(graph?.kind).toBe("service-graph");
    expect(graph?.calls).toHaveLength(4);
    expect(serviceGraphOfDependencies(new Map([["shop", "no such service"]]))).toBeUndefined();
  });
});
