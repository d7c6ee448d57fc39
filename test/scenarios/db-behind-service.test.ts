import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PlaybookExecutionResult } from "@pes/contracts";
import { mitigationNames } from "./answer-checks.js";
import { expectEveryActionRanAndLinks } from "./common-checks.js";
import { dbBehindService } from "./data/db-connections.js";
import { checkEvidenceBundle } from "./evidence-bundles.js";
import { startScenario, type RunningScenario } from "./run-scenario.js";

// The db-connections incident paged for the service that fails: orders-db's connections reach their limit,
// then orders fails ("High error rate on orders"). service-health reads orders' database as an upstream.
let run: RunningScenario;
let result: PlaybookExecutionResult;

beforeAll(async () => {
  run = await startScenario(dbBehindService);
  result = await run.investigate();
});

afterAll(async () => {
  await run?.stop();
});

describe("scenario: a database at its connection limit behind the service paged", () => {
  it("names orders-db as the likely cause, by its connections at their limit", () => {
    expect(result.verdict?.conclusion).toBe("cause");
    expect(result.verdict?.cause).toMatchObject({ kind: "upstream", subject: "orders-db", action: "Connections in use on orders-db" });
    expect(result.verdict?.symptoms).toContainEqual(
      expect.objectContaining({ kind: "saturation", detail: "pg_settings_max_connections", action: "Connections in use on orders-db" }),
    );
  });

  it("offers what frees connections on orders-db, naming it: the pool, idle sessions, the limit itself", () => {
    const names = mitigationNames(result);
    expect(names).toEqual(
      expect.arrayContaining(["Shrink orders's connection pool to orders-db", "Terminate idle sessions on orders-db", "Raise max_connections on orders-db"]),
    );
    expect(names).not.toContain("Roll back orders");
  });

  it("keeps an evidence bundle that replays offline to the same verdict and mitigations", async () => {
    await checkEvidenceBundle(run, result);
  });

  it("runs every action against its server and links each to the data behind it", async () => {
    await expectEveryActionRanAndLinks(run, result, "orders");
  });
});
