import { defineConnector } from "../connector-definition.js";
import { AlertmanagerDataSource, AlertmanagerAction, alertmanagerMatcherTemplate } from "./schema.js";
import { alertmanagerLink, alertmanagerSilenceForm } from "./alertmanager-link.js";

/** The alertmanager connector: alerts firing around the issue, and the silences over them. */
export const alertmanagerConnector = defineConnector({
  type: "alertmanager",
  noun: "an Alertmanager data source",
  builds: "matchers",
  dataSource: AlertmanagerDataSource,
  query: AlertmanagerAction,
  // Names are label names (no placeholder can be in one): only values are filled.
  templates: [{ path: ["matchers"], leaves: true, encoding: alertmanagerMatcherTemplate }],
  link: (dataSource, query) => alertmanagerLink(dataSource, query),
  mitigationLinks: { silence: alertmanagerSilenceForm },
  runtime: async () => (await import("./runtime.js")).alertmanagerRuntime,
});
