import type { SilenceMatcher } from "../connector-definition.js";
import { baseUrlOf, withoutCredentials } from "../url-text.js";
import { matcherText } from "./alertmanager-matchers.js";
import type { AlertmanagerAction, AlertmanagerDataSource, AlertmanagerMatcher } from "./schema.js";

/**
 * The Alertmanager UI's alert list filtered on the action's matchers, as the UI writes its own URLs
 * (ui/app/src/Utils/Filter.elm, `toUrl`): `#/alerts?silenced=…&inhibited=…&active=true&filter={…}`.
 */
export function alertmanagerLink(dataSource: AlertmanagerDataSource, action: AlertmanagerAction): string {
  const params = [`silenced=${action.includeSilenced}`, `inhibited=${action.includeInhibited}`, "active=true"];
  if (action.matchers.length > 0) params.push(`filter=${filterOf(action.matchers)}`);
  return `${uiBaseOf(dataSource)}/#/alerts?${params.join("&")}`;
}

/** Alertmanager's "new silence" form with the matchers filled in (`#/silences/new?filter={…}`, as its UI links to it). */
export function alertmanagerSilenceForm(dataSource: AlertmanagerDataSource, matchers: readonly SilenceMatcher[]): string {
  return `${uiBaseOf(dataSource)}/#/silences/new?filter=${filterOf(matchers)}`;
}

/** Where people open the UI: at `externalUrl` when the data source has one, else at `url`, without user:password. */
function uiBaseOf(dataSource: AlertmanagerDataSource): string {
  return dataSource.externalUrl === undefined ? baseUrlOf(dataSource) : withoutCredentials(dataSource.externalUrl);
}

/**
 * The UI's `filter` parameter, URL-encoded: `{name="value", …}`, each matcher written by `matcherText`, so
 * a value can neither end its string nor add a matcher.
 */
function filterOf(matchers: readonly AlertmanagerMatcher[]): string {
  return encodeURIComponent(`{${matchers.map(matcherText).join(", ")}}`);
}
