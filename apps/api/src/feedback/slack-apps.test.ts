import type { Catalog } from "@pes/config";
import { describe, expect, it } from "vitest";
import { testCatalog } from "../testing/fixtures.js";
import { slackAppsOf } from "./slack-apps.js";

/** The test catalog with acme's Slack app taking interactions. */
function withSigningSecret(): Catalog {
  const catalog = testCatalog();
  const organizations = new Map(
    [...catalog.organizations].map(([id, org]) => [
      id,
      id === "acme" && org.slack !== undefined ? { ...org, slack: { ...org.slack, signingSecret: { env: "ACME_SLACK_SIGNING_SECRET" } } } : org,
    ]),
  );
  return { ...catalog, organizations };
}

describe("slackAppsOf", () => {
  it("takes interactions for the organizations whose app has a signing secret, with their secrets resolved", async () => {
    const apps = await slackAppsOf(withSigningSecret(), { ACME_SLACK_SIGNING_SECRET: "acme-signing-secret", ACME_SLACK_TOKEN: "xoxb-acme" });
    expect([...apps.keys()]).toEqual(["acme"]);
    expect(apps.get("acme")?.signingSecret).toBe("acme-signing-secret");
    expect((await slackAppsOf(testCatalog(), {})).size).toBe(0);
  });

  it("refuses to start when such an app's secret cannot be resolved, naming the reference and never a value", async () => {
    await expect(slackAppsOf(withSigningSecret(), { ACME_SLACK_TOKEN: "xoxb-acme" })).rejects.toThrow(/ACME_SLACK_SIGNING_SECRET/);
    await expect(slackAppsOf(withSigningSecret(), { ACME_SLACK_SIGNING_SECRET: "acme-signing-secret" })).rejects.toThrow(/ACME_SLACK_TOKEN/);
  });
});
