import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { shippedNodeOptions } from "./service-processes.js";

describe("shippedNodeOptions", () => {
  it("reads the flags the Docker image runs the service with", () => {
    const repoRoot = fileURLToPath(new URL("../..", import.meta.url));
    expect(shippedNodeOptions(repoRoot)).toEqual(["--max-old-space-size=192"]);
  });
});
