import { describeSecretRef, resolveSecrets, type DataSourceSecrets, type SecretSources } from "@pes/connectors/schemas";
import type { Catalog } from "./catalog.js";

/** Every data source's secrets, by organization then data-source name. */
export type CatalogSecrets = ReadonlyMap<string, ReadonlyMap<string, DataSourceSecrets>>;

/** The secrets of each organization's chat apps and incident tools (`slack`, `teams`, `incidentTools`), by organization. */
export type IntegrationSecrets = ReadonlyMap<string, DataSourceSecrets>;

/**
 * Resolves the secret references of every data source, Slack app and incident tool of the catalog, once
 * (the worker does it at start and hands them to the engine and its integrations). `missing` has one
 * message per reference it cannot resolve, naming the organization, the data source or integration, the
 * field and the variable or file (never a value); the worker refuses to run when it is not empty.
 */
export function resolveCatalogSecrets(
  catalog: Catalog,
  sources: SecretSources,
): { secrets: CatalogSecrets; integrations: IntegrationSecrets; missing: string[] } {
  const secrets = new Map<string, Map<string, DataSourceSecrets>>();
  const integrations = new Map<string, DataSourceSecrets>();
  const missing: string[] = [];
  for (const organization of catalog.organizations.values()) {
    const byName = new Map<string, DataSourceSecrets>();
    for (const [name, dataSource] of organization.dataSources) {
      const resolved = resolveSecrets(dataSource, sources);
      byName.set(name, resolved.secrets);
      for (const { path, ref, problem } of resolved.missing) {
        missing.push(`organization ${organization.id}, data source ${name}: ${describeSecretRef(ref)} (${path.join(".")}) ${problem}`);
      }
    }
    secrets.set(organization.id, byName);

    const tools = resolveSecrets({ slack: organization.slack, teams: organization.teams, incidentTools: organization.incidentTools }, sources);
    integrations.set(organization.id, tools.secrets);
    for (const { path, ref, problem } of tools.missing) {
      missing.push(`organization ${organization.id}, ${path[0]}: ${describeSecretRef(ref)} (${path.join(".")}) ${problem}`);
    }
  }
  return { secrets, integrations, missing };
}

/** The messages of resolveCatalogSecrets: every secret reference the environment cannot resolve. */
export function checkSecrets(catalog: Catalog, env: SecretSources["env"]): string[] {
  return resolveCatalogSecrets(catalog, { env }).missing;
}
