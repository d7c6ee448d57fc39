import { baseUrlOf, withoutCredentials } from "../url-text.js";
import { matcherText } from "./alertmanager-matchers.js";
import type { AlertmanagerAction, AlertmanagerDataSource } from "./schema.js";

/**
 * The Alertmanager UI's alert list filtered on the action's matchers, as the UI writes its own URLs
 * (ui/app/src/Utils/Filter.elm, `toUrl`): `#/alerts?silenced=…&inhibited=…&active=true&filter={…}`.
 * At `externalUrl` when the data source has one.
 */
export function alertmanagerLink(dataSource: AlertmanagerDataSource, action: AlertmanagerAction): string {
  const base = dataSource.externalUrl === undefined ? baseUrlOf(dataSource) : withoutCredentials(dataSource.externalUrl);
  const params = [`silenced=${action.includeSilenced}`, `inhibited=${action.includeInhibited}`, "active=true"];
  if (action.matchers.length > 0) params.push(`filter=${encodeURIComponent(`{${action.matchers.map(matcherText).join(", ")}}`)}`);
  return `${base}/#/alerts?${params.join("&")}`;
}
