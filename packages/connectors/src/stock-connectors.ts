import { alertmanagerConnector } from "./alertmanager/definition.js";
import { createConnectorRegistry } from "./connector-registry.js";
import { datadogConnector } from "./datadog/definition.js";
import { elasticsearchConnector } from "./elasticsearch/definition.js";
import { httpConnector } from "./http/definition.js";
import { kubernetesConnector } from "./kubernetes/definition.js";
import { lokiConnector } from "./loki/definition.js";
import { prometheusConnector } from "./prometheus/definition.js";

/** The connectors this service ships: one line each. */
export const stockConnectors = [
  prometheusConnector,
  httpConnector,
  datadogConnector,
  lokiConnector,
  elasticsearchConnector,
  alertmanagerConnector,
  kubernetesConnector,
] as const;

/** The registry of the stock connectors: what configuration, playbooks and the engine use by default. */
export const connectorRegistry = createConnectorRegistry(stockConnectors);
