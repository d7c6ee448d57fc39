import { alertmanagerConnector } from "./alertmanager/schema.js";
import { createConnectorRegistry } from "./connector-registry.js";
import { datadogConnector } from "./datadog/schema.js";
import { elasticsearchConnector } from "./elasticsearch/schema.js";
import { httpConnector } from "./http/schema.js";
import { kubernetesConnector } from "./kubernetes/schema.js";
import { lokiConnector } from "./loki/schema.js";
import { prometheusConnector } from "./prometheus/schema.js";

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
