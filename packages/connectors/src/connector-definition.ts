import type { z } from "zod";
import type { ConnectorRuntime, DataSourceBase, TimeWindow } from "./connector.js";

/**
 * How the values of one kind of template are written, declared once and used everywhere: configuration
 * loading checks placeholders and URLs with it, the runner fills queries with it.
 */
export interface TemplateEncoding {
  /** Names the target language in template lists: `promql`, `url`, `json`, `text`… */
  target: string;
  /**
   * The `|filter`s this encoding understands (e.g. `regex`), and how error messages name the templates
   * that take them (`prometheus queries`). Any other filter is a configuration error.
   */
  filters?: { names: readonly string[]; where: string };
  /**
   * URL templates are checked at load: `absolute` must fix scheme and host before its first placeholder;
   * `under-data-source` is appended to the data source's URL and must stay under it.
   */
  url?: "absolute" | "under-data-source";
  /**
   * Why the template itself can never be filled safely, whatever the values (a placeholder inside a
   * string literal of a query): configuration loading reports it, and `fill` refuses it.
   */
  problem?(template: string): string | undefined;
  /**
   * Fills one template with the attributes. Throws MissingAttributesError naming what the issue lacks,
   * or an error saying why a value cannot be written (UnsafeValueError, a lone surrogate…).
   */
  fill(template: string, attributes: Readonly<Record<string, string>>, dataSource: DataSourceBase): string;
}

/** One field of a connector's query that holds a template. */
export interface TemplateField {
  /** Where the field is in the query, e.g. `["query"]`. An absent (optional) field is skipped. */
  path: readonly string[];
  /** When true, the field is a JSON value whose every string leaf is a template (keys stay literal). */
  leaves?: boolean;
  encoding: TemplateEncoding;
}

/** One matcher of a silence: the label `name` equal to `value`, exactly (Alertmanager's API v2 form). */
export interface SilenceMatcher {
  name: string;
  value: string;
  isRegex: false;
  isEqual: true;
}

/**
 * The links a connector's data sources offer to the playbook format's mitigations, by the key of the
 * mitigation that names a data source (`silence: { dataSource: … }`). Configuration loading refuses such
 * a mitigation when its data source's connector does not offer that kind; the engine asks the connector
 * for the link. Each is pure (no I/O).
 */
export interface MitigationLinks<DS extends DataSourceBase> {
  /** The data source's form that creates a silence with these matchers, filled in. */
  silence?(dataSource: DS, matchers: readonly SilenceMatcher[]): string;
}

/** The kinds of mitigation link a connector can offer: `silence`. */
export type MitigationKind = keyof MitigationLinks<DataSourceBase>;

/** A data source's mitigation links, bound to it (mitigationLinksOf). */
export interface DataSourceMitigationLinks {
  silence?(matchers: readonly SilenceMatcher[]): string;
}

/** A zod schema of a data source: an object whose literal `type` tells the connectors apart. */
export type DataSourceSchema<DS extends DataSourceBase> = z.ZodType<DS> & z.core.$ZodTypeDiscriminable;

/**
 * Everything a connector is, in one place (its folder's `definition.ts`): its type, the shapes it accepts,
 * which query fields are templates and how each is escaped, its links, and where its runtime lives.
 * Schemas must be idempotent (parsing a parsed value gives it back): the worker re-parses each action's
 * data source and query once at start, which is how they get their connector's own types.
 */
export interface ConnectorDefinition<DS extends DataSourceBase, Q> {
  /** The data source's `type` and the key of an action's query, e.g. `prometheus`. */
  type: string;
  /** How messages name a data source of this type: `a Prometheus data source`. */
  noun: string;
  /** What its filled templates make, as in "could not build the query": `query`, `request`. */
  builds: string;
  dataSource: DataSourceSchema<DS>;
  query: z.ZodType<Q>;
  templates: readonly TemplateField[];
  /**
   * Whether an action of this query reports changes (deploys, config changes, restarts) that happened in
   * its window: the engine looks further back with such actions when a symptom's trend began before the
   * window. Absent: none do.
   */
  reportsChanges?(query: Q): boolean;
  /** The deep link of a filled query (pure: no I/O); undefined when the connector has none. */
  link(dataSource: DS, query: Q, window: TimeWindow): string | undefined;
  /** The links its data sources offer to mitigations; absent: none. */
  mitigationLinks?: MitigationLinks<DS>;
  /** Loads the runtime half (a dynamic import): the API never calls it, so it never loads it. */
  runtime(): Promise<ConnectorRuntime<DS, Q>>;
}

/**
 * A connector as a registry holds it: what generic code reads (type, schemas, templates), without its
 * data-source and query types. `with` hands its typed definition to a generic function, which is how
 * the runner reaches those types without a cast.
 */
export interface Connector {
  readonly type: string;
  readonly noun: string;
  readonly dataSource: DataSourceSchema<DataSourceBase>;
  readonly query: z.ZodType;
  readonly templates: readonly TemplateField[];
  with<R>(use: <DS extends DataSourceBase, Q>(definition: ConnectorDefinition<DS, Q>) => R): R;
}

/** A connector and, for its own tests, its typed definition. */
export interface DefinedConnector<DS extends DataSourceBase, Q> extends Connector {
  readonly definition: ConnectorDefinition<DS, Q>;
}

/** Declares a connector; its runtime is loaded once, on first use. */
export function defineConnector<DS extends DataSourceBase, Q>(declared: ConnectorDefinition<DS, Q>): DefinedConnector<DS, Q> {
  let loading: Promise<ConnectorRuntime<DS, Q>> | undefined;
  const definition: ConnectorDefinition<DS, Q> = { ...declared, runtime: () => (loading ??= declared.runtime()) };
  return {
    type: definition.type,
    noun: definition.noun,
    dataSource: definition.dataSource,
    query: definition.query,
    templates: definition.templates,
    definition,
    with: (use) => use(definition),
  };
}

/**
 * The mitigation links a data source offers, bound to it: its connector's schema parses it once, which
 * gives it the connector's type. Empty when the connector offers none.
 * @throws ZodError when the data source does not fit the connector (configuration loading checks it first).
 */
export function mitigationLinksOf(connector: Connector, dataSource: unknown): DataSourceMitigationLinks {
  return connector.with(({ dataSource: schema, mitigationLinks }) => {
    if (mitigationLinks === undefined) return {};
    const configured = schema.parse(dataSource);
    const { silence } = mitigationLinks;
    return silence === undefined ? {} : { silence: (matchers) => silence(configured, matchers) };
  });
}
