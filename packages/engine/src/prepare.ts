import type { Catalog, CatalogSecrets } from "@pes/config";
import {
  connectDataSource,
  mitigationLinksOf,
  NO_SECRETS,
  prepareAction,
  type ConnectorRegistry,
  type DataSource,
  type DataSourceConnection,
  type DataSourceMitigationLinks,
  type PreparedAction,
} from "@pes/connectors";
import { errorMessage } from "@pes/contracts";
import type { Logger } from "@pes/logger";
import type { ActionDefinition } from "@pes/playbooks";
import type { QueryMinuteLimit, QuerySlotLimit } from "./query-slots.js";
import { sameQueryKey } from "./same-query.js";

/*
 * What an engine binds once, when it is built: every data source's connection and mitigation links, and
 * every action of every playbook bound to its connector and data source. An execution then only plans,
 * runs, judges and keeps evidence.
 */

/** An action of a playbook, bound to its connector and data source once, when the engine is built. */
export interface PreparedStep {
  gadgetIndex: number;
  definition: ActionDefinition;
  /** The connector type that takes the action (`unknown` if none), for metrics. */
  connector: string;
  /** Ready to run, or why it cannot run (a data source missing or of the wrong type). */
  prepared: PreparedAction | string;
  /** The data source's limit of queries at once, when it sets one. */
  slots?: QuerySlotLimit;
  /** The organization's queries per minute on the data source, when it sets a budget of them. */
  perMinute?: QueryMinuteLimit;
  /** What it asks (sameQueryKey): an execution runs each once. Absent when it cannot run. */
  queryKey?: string;
}

/**
 * Every action of every playbook, bound to its connector (the registry's, by the action's query key) and
 * to its data source: once per engine, so that an execution only fills titles and runs.
 */
export function prepareSteps(
  catalog: Catalog,
  connectionsByOrganization: ReadonlyMap<string, ReadonlyMap<string, DataSourceConnection>>,
  connectors: ConnectorRegistry,
  logger: Logger,
): Map<string, Map<string, PreparedStep[]>> {
  const byOrganization = new Map<string, Map<string, PreparedStep[]>>();
  for (const org of catalog.organizations.values()) {
    const connections = connectionsByOrganization.get(org.id) ?? new Map<string, DataSourceConnection>();
    const byPlaybook = new Map<string, PreparedStep[]>();
    for (const [name, playbook] of org.playbooks) {
      byPlaybook.set(
        name,
        playbook.gadgets.flatMap((gadget, gadgetIndex) =>
          gadget.actions.map((definition) => ({
            gadgetIndex,
            definition,
            connector: connectors.connectorOf(definition)?.type ?? "unknown",
            ...preparedStep(definition, org.dataSources, connections, connectors, logger),
            ...slotsOf(org.id, definition.dataSource, org.dataSources.get(definition.dataSource)),
            ...perMinuteOf(org.id, definition.dataSource, org.budget?.dataSourceQueriesPerMinute),
          })),
        ),
      );
    }
    byOrganization.set(org.id, byPlaybook);
  }
  return byOrganization;
}

/** The action bound to its connector and data source (or why it cannot run), and what it asks. */
function preparedStep(
  definition: ActionDefinition,
  dataSources: ReadonlyMap<string, DataSource>,
  connections: ReadonlyMap<string, DataSourceConnection>,
  connectors: ConnectorRegistry,
  logger: Logger,
): Pick<PreparedStep, "prepared" | "queryKey"> {
  const prepared = prepareStep(definition, dataSources, connections, connectors, logger);
  if (typeof prepared === "string") return { prepared };
  return { prepared, queryKey: sameQueryKey(definition.dataSource, prepared.type, definition[prepared.type]) };
}

/** The data source's query limit, when it sets one: keyed by organization and name, as configured. */
function slotsOf(orgId: string, name: string, dataSource: DataSource | undefined): { slots?: QuerySlotLimit } {
  const max = dataSource?.maxConcurrentQueries;
  return max === undefined ? {} : { slots: { key: `${orgId}/${name}`, max, dataSource: name } };
}

/** The organization's per-minute budget on the data source, when it sets one: keyed as its slots are. */
function perMinuteOf(orgId: string, name: string, max: number | undefined): { perMinute?: QueryMinuteLimit } {
  return max === undefined ? {} : { perMinute: { key: `${orgId}/${name}`, max, dataSource: name } };
}

/** One connection per data source of every organization: its HTTP client and its secrets. */
export function connectDataSources(catalog: Catalog, secrets: CatalogSecrets): Map<string, Map<string, DataSourceConnection>> {
  const byOrganization = new Map<string, Map<string, DataSourceConnection>>();
  for (const org of catalog.organizations.values()) {
    const byName = new Map<string, DataSourceConnection>();
    for (const [name, dataSource] of org.dataSources) {
      try {
        byName.set(name, connectDataSource(dataSource, secrets.get(org.id)?.get(name) ?? NO_SECRETS));
      } catch (error) {
        throw new Error(`organization ${org.id}, data source ${name}: ${errorMessage(error)}`);
      }
    }
    byOrganization.set(org.id, byName);
  }
  return byOrganization;
}

/** The action bound to its connector and data source, or why it cannot run. */
function prepareStep(
  definition: ActionDefinition,
  dataSources: ReadonlyMap<string, DataSource>,
  connections: ReadonlyMap<string, DataSourceConnection>,
  connectors: ConnectorRegistry,
  logger: Logger,
): PreparedAction | string {
  const dataSource = dataSources.get(definition.dataSource);
  const connection = connections.get(definition.dataSource);
  if (dataSource === undefined || connection === undefined) return `the organization has no data source "${definition.dataSource}"`;
  const connector = connectors.connectorOf(definition);
  if (connector === undefined) return "the action names no connector this worker knows";
  if (dataSource.type !== connector.type) return `data source "${definition.dataSource}" is not ${connector.noun}`;
  try {
    return prepareAction(connector, dataSource, definition[connector.type], connection);
  } catch (error) {
    // Configuration loading checked both with the same schemas: this is a bug, not a playbook mistake.
    logger.error({ err: error, dataSource: definition.dataSource }, "action does not fit its connector");
    return "does not fit its connector (details in the worker log)";
  }
}

/** The mitigation links of every data source whose connector offers some, by organization and name. */
export function bindMitigationLinks(catalog: Catalog, connectors: ConnectorRegistry): Map<string, Map<string, DataSourceMitigationLinks>> {
  const byOrganization = new Map<string, Map<string, DataSourceMitigationLinks>>();
  for (const org of catalog.organizations.values()) {
    const byName = new Map<string, DataSourceMitigationLinks>();
    for (const [name, dataSource] of org.dataSources) {
      const connector = connectors.get(dataSource.type);
      if (connector !== undefined) byName.set(name, mitigationLinksOf(connector, dataSource));
    }
    byOrganization.set(org.id, byName);
  }
  return byOrganization;
}
