import { SecretRef } from "@pes/connectors/schemas";
import type { Catalog } from "./catalog.js";

/**
 * Lists every secret reference of the catalog whose environment variable is unset or empty, one
 * message per reference naming the organization, the data source, the field and the variable (never a
 * value). The worker calls it at start and refuses to run when the list is not empty.
 */
export function checkSecrets(catalog: Catalog, env: NodeJS.ProcessEnv = process.env): string[] {
  const missing: string[] = [];
  for (const organization of catalog.organizations.values()) {
    for (const [name, dataSource] of organization.dataSources) {
      for (const { path, ref } of secretRefsIn(dataSource, [])) {
        const value = env[ref.env];
        if (value === undefined || value === "") {
          missing.push(
            `organization ${organization.id}, data source ${name}: environment variable ${ref.env} ` +
              `(${path.join(".")}) is not set`,
          );
        }
      }
    }
  }
  return missing;
}

/** Secret references anywhere in a data source: found by shape, so a new connector needs no change here. */
function secretRefsIn(value: unknown, path: string[]): { path: string[]; ref: SecretRef }[] {
  const ref = SecretRef.safeParse(value);
  if (ref.success) return [{ path, ref: ref.data }];
  if (Array.isArray(value)) return value.flatMap((item: unknown, index) => secretRefsIn(item, [...path, String(index)]));
  if (value !== null && typeof value === "object") {
    return Object.entries(value).flatMap(([key, item]) => secretRefsIn(item, [...path, key]));
  }
  return [];
}
