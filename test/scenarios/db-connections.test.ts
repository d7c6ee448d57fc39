import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PlaybookExecutionResult } from "@pes/contracts";
import { actionResult, causeSentence, mitigationNames, sentences } from "./answer-checks.js";
import { expectEveryActionRanAndLinks } from "./common-checks.js";
import { dbConnections } from "./data/db-connections.js";
import { checkEvidenceBundle } from "./evidence-bundles.js";
import { startScenario, type RunningScenario } from "./run-scenario.js";

// orders-db's connections climb from 38 to its limit of 100 over 16 minutes; then Postgres refuses clients
// and orders fails. A search rollout falls in between. See data/db-connections.ts.
let run: RunningScenario;
let result: PlaybookExecutionResult;

beforeAll(async () => {
  run = await startScenario(dbConnections);
  result = await run.investigate();
});

afterAll(async () => {
  await run?.stop();
});

describe("scenario: a database saturating its connections", () => {
  it("names orders-db's connections at their limit as the likely cause, dated when they began to climb", () => {
    const cause = result.verdict?.cause;
    expect(result.verdict?.conclusion).toBe("cause");
    expect(cause).toMatchObject({ kind: "saturation", subject: "db=orders-db", action: "Connections in use on orders-db" });
    // The limit named by what it is, not by its query.
    expect(causeSentence(result)).toMatch(
      /likely cause: Connections in use on orders-db \(db=orders-db\) at 100 of 100 conns, 100% of its max connections \(Connections of orders-db\)/,
    );
    // The climb began 22 minutes before the issue; it crossed twice its usual level 12 minutes before.
    // Dated by its change point, it began before the search rollout (14 minutes before).
    const minutesBefore = (run.scenario.issueAt.getTime() - Date.parse(cause?.onset ?? "")) / 60_000;
    expect(minutesBefore).toBeGreaterThan(14);
    expect(minutesBefore).toBeLessThanOrEqual(23);
  });

  it("does not blame the search rollout, which came after the climb began", () => {
    const search = result.verdict?.ruledOut.find(({ detail }) => detail?.includes("search:v3.1"));
    expect(search).toMatchObject({ kind: "deploy", action: "Rollouts in shop", why: "after-first-symptom" });
    expect(causeSentence(result) ?? "").not.toMatch(/search|cart|deploy/);
    const changes = sentences(result.highlights).find((sentence) => /search:v3\.1/.test(sentence)) ?? "";
    expect(changes).toContain("(Rollouts in shop)");
    expect(changes).toMatch(/not (its|the) cause/);
  });

  it("states the consequences, each citing its action: orders failing (by its service label), Postgres refusing clients", () => {
    const symptoms = result.verdict?.symptoms ?? [];
    expect(symptoms.find(({ action }) => action === "Error ratio by service")?.subject).toContain("service=orders");
    expect(symptoms.find(({ action }) => action === "Postgres errors of orders-db")).toMatchObject({
      kind: "log-pattern",
      detail: expect.stringMatching(/too many clients/),
    });
    expect(actionResult(result, "Error ratio by service").shortAnswer).toContain("orders");
    expect(actionResult(result, "Postgres errors of orders-db").shortAnswer).toMatch(/too many clients/);
    expect(result.highlights).toMatch(/service=orders|orders\b[^.]*Error ratio by service|Error ratio by service[^.]*orders/);
    expect(result.highlights).toContain("Postgres errors of orders-db");
  });

  it("names none of the noise: the usual duplicate-key errors, users-db, the shop's standing alerts", () => {
    expect(actionResult(result, "Postgres errors of orders-db").shortAnswer).not.toMatch(/duplicate key/);
    expect(result.highlights).not.toMatch(/users-db|DiskSpaceLow|Watchdog|report-generator/);
  });

  it("offers the database's remedies, and no roll back", () => {
    const names = mitigationNames(result);
    expect(names).toContain("Terminate idle-in-transaction sessions on orders-db");
    expect(names.some((name) => /roll back/i.test(name))).toBe(false);
  });

  it("keeps an evidence bundle that replays offline to the same verdict and mitigations", async () => {
    await checkEvidenceBundle(run, result);
  });

  it("runs every action against its server and links each to the data behind it", async () => {
    await expectEveryActionRanAndLinks(run, result, "orders-db");
  });
});
