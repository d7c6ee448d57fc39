import { z } from "zod";
import type { TlsOptions } from "./connection-options.js";
import type { DataSourceBase } from "./connector.js";
import type { Connector, MitigationKind, TemplateEncoding } from "./connector-definition.js";

/**
 * The connectors a process knows, and everything derived from them: the data-source union, the action
 * query keys, which connector an action uses. Configuration, playbooks and the engine read these, never
 * a connector by name: adding a connector is its folder plus one line in the list.
 */
export interface ConnectorRegistry {
  readonly connectors: readonly Connector[];
  /** The action query keys, one per connector: `prometheus`, `http`, … */
  readonly types: readonly string[];
  /** A data source of any of the connectors, told apart by `type`. */
  readonly dataSource: z.ZodType<ConfiguredDataSource>;
  /** The connector of a data-source type (the same name as its actions' query key). */
  get(type: string): Connector | undefined;
  /** The connector an action uses: the one whose type is a key of the action (undefined unless exactly one is). */
  connectorOf(action: object): Connector | undefined;
  /** How messages name the templates that take a `|filter` (`prometheus queries`). */
  readonly filterPlaces: readonly string[];
  /** The data-source types whose connector offers this kind of mitigation link (`silence`: `alertmanager`). */
  typesOffering(kind: MitigationKind): readonly string[];
}

/**
 * A data source as configuration holds it: what every connector's data source has, and its own fields,
 * which only its connector reads.
 */
export const ConfiguredDataSource = z.looseObject({
  type: z.string(),
  url: z.string(),
  // Checked by the connector's own schema, which the data source has just passed.
  tls: z.custom<TlsOptions>().optional(),
  proxy: z.string().optional(),
  maxConcurrentQueries: z.number().optional(),
  teams: z.array(z.string()).optional(),
});
export type ConfiguredDataSource = DataSourceBase & z.infer<typeof ConfiguredDataSource>;

/** Builds a registry from a list of connectors; a type listed twice is a programming error. */
export function createConnectorRegistry(connectors: readonly [Connector, ...Connector[]]): ConnectorRegistry {
  const byType = new Map<string, Connector>();
  for (const connector of connectors) {
    if (byType.has(connector.type)) throw new Error(`two connectors of type "${connector.type}"`);
    byType.set(connector.type, connector);
  }
  const [first, ...rest] = connectors;
  // Parsed by its connector's own schema, then read as what every data source has.
  const dataSource = z.discriminatedUnion("type", [first.dataSource, ...rest.map((connector) => connector.dataSource)]).pipe(ConfiguredDataSource);
  const types = [...byType.keys()];
  const encodings = connectors.flatMap((connector) => connector.templates.map((field): TemplateEncoding => field.encoding));
  return {
    connectors,
    types,
    dataSource,
    get: (type) => byType.get(type),
    connectorOf(action) {
      const keys = types.filter((type) => Object.hasOwn(action, type));
      const [only] = keys;
      return keys.length === 1 && only !== undefined ? byType.get(only) : undefined;
    },
    filterPlaces: [...new Set(encodings.flatMap((encoding) => (encoding.filters === undefined ? [] : [encoding.filters.where])))],
    typesOffering: (kind) =>
      connectors.filter((connector) => connector.with(({ mitigationLinks }) => mitigationLinks?.[kind] !== undefined)).map(({ type }) => type),
  };
}
