import { describe, expect, it } from "vitest";
import type { Catalog } from "./catalog.js";
import { checkSecrets } from "./check-secrets.js";
import { createMonitorNameMatcher } from "@pes/playbooks";
import type { DataSource } from "@pes/connectors/schemas";

function catalogWith(dataSources: Record<string, DataSource>): Catalog {
  return {
    organizations: new Map([
      [
        "acme",
        {
          id: "acme",
          clientIds: new Set(["cli"]),
          dataSources: new Map(Object.entries(dataSources)),
          playbooks: new Map(),
          playbookList: [],
          matcher: createMonitorNameMatcher([]),
        },
      ],
    ]),
  };
}

const catalog = catalogWith({
  prom: { type: "prometheus", url: "https://prom.example", auth: { bearerToken: { env: "PROM_TOKEN" } } },
  mimir: { type: "prometheus", url: "https://mimir.example", auth: { basic: { username: "u", password: { env: "MIMIR_PASSWORD" } } } },
  deploys: {
    type: "http",
    url: "https://deploys.example",
    headers: { Authorization: { env: "DEPLOYS_TOKEN" }, "X-Team": "sre" },
  },
  open: { type: "prometheus", url: "http://127.0.0.1:9090" },
});

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
});
