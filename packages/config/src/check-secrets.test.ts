import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { checkSecrets, resolveCatalogSecrets } from "./check-secrets.js";
import { loadConfig } from "./load-config.js";

const catalog = await loadConfig(fileURLToPath(new URL("./testing/config", import.meta.url)));

describe("checkSecrets", () => {
  it("lists every secret reference whose variable is unset or empty, naming org, data source and variable", () => {
    expect(checkSecrets(catalog, { PROM_TOKEN: "s3cret", MIMIR_PASSWORD: "" })).toEqual([
      "organization acme, data source mimir: environment variable MIMIR_PASSWORD (auth.basic.password) is not set",
      "organization acme, data source deploys: environment variable DEPLOYS_TOKEN (headers.Authorization) is not set",
    ]);
  });

  it("is empty when every variable is set, and never mentions values", () => {
    const env = { PROM_TOKEN: "s3cret", MIMIR_PASSWORD: "pw", DEPLOYS_TOKEN: "tok" };
    expect(checkSecrets(catalog, env)).toEqual([]);
    expect(checkSecrets(catalog, {}).join("\n")).not.toMatch(/s3cret|sre/);
  });

  it("lists the Slack token, Teams secrets and incident-tool keys that cannot be resolved, and resolves the others", async () => {
    const withTools = await loadConfig(fileURLToPath(new URL("./testing/config-with-integrations", import.meta.url)));
    expect(checkSecrets(withTools, { ACME_PD_TOKEN: "pd-secret", ACME_TEAMS_SECRET: "teams-secret" })).toEqual([
      "organization acme, slack: environment variable ACME_SLACK_TOKEN (slack.botToken) is not set",
      "organization acme, teams: environment variable ACME_TEAMS_REFRESH (teams.refreshToken) is not set",
      "organization acme, incidentTools: environment variable ACME_OPSGENIE_KEY (incidentTools.opsgenie.apiKey) is not set",
    ]);
    const { integrations, missing } = resolveCatalogSecrets(withTools, {
      env: {
        ACME_SLACK_TOKEN: "xoxb-secret",
        ACME_PD_TOKEN: "pd-secret",
        ACME_OPSGENIE_KEY: "og-secret",
        ACME_TEAMS_SECRET: "teams-secret",
        ACME_TEAMS_REFRESH: "refresh-secret",
      },
    });
    expect(missing).toEqual([]);
    expect(integrations.get("acme")?.value({ env: "ACME_SLACK_TOKEN" })).toBe("xoxb-secret");
    expect(integrations.get("acme")?.value({ env: "ACME_TEAMS_REFRESH" })).toBe("refresh-secret");
    expect(integrations.get("acme")?.redacted).toEqual(["xoxb-secret", "teams-secret", "refresh-secret", "pd-secret", "og-secret"]);
  });
});
