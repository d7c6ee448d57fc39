import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { checkSecrets } from "./check-secrets.js";
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
});
