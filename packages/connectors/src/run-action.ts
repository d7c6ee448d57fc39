import { describeFetchFailure, type Evidence } from "@pes/analysis";
import { MissingAttributesError } from "@pes/templates";
import type { ActionContext, ActionRequest, ConnectorRuntime, DataSourceBase, DataSourceConnection, Found } from "./connector.js";
import type { Connector, ConnectorDefinition } from "./connector-definition.js";
import type { HttpClient } from "./http-client.js";
import { fillQuery } from "./query-templates.js";
import { redactEvidence, redactSecrets } from "./redaction.js";

/**
 * Runs an action with one connector: fills the query's template fields with the encodings the connector
 * declares, builds its link, then lets it fetch. An attribute the issue lacks makes the action `skipped`;
 * a value a template cannot hold makes it `failed` before anything is sent. This is the one place where
 * runtimes are called: every evidence leaves it with the data source's secrets redacted from its texts.
 */
export async function runConnectorAction<DS extends DataSourceBase, Q, F extends Found>(
  definition: ConnectorDefinition<DS, Q>,
  runtime: ConnectorRuntime<DS, Q, F>,
  request: ActionRequest<DS, Q>,
): Promise<F | Evidence> {
  const { title, dataSource, spec, attributes, window, signal, deadline, secrets } = request;
  const http = deadline === undefined ? request.http : withDeadline(request.http, deadline);
  let query: Q;
  let link: string | undefined;
  try {
    query = fillQuery(spec, definition.templates, attributes, dataSource);
    link = definition.link(dataSource, query, window);
  } catch (error) {
    if (error instanceof MissingAttributesError) return redactEvidence({ kind: "skipped", action: title, missing: error.names }, secrets);
    const reason = `could not build the ${definition.builds}: ${error instanceof Error ? error.message : String(error)}`;
    return redactEvidence({ kind: "failed", action: title, reason }, secrets);
  }
  let found: Found;
  try {
    const fetch = (fetchSignal: AbortSignal) => runtime.fetch({ title, dataSource, query, attributes, window, signal: fetchSignal, secrets, http, link });
    // Runtimes read the filled query and the window, never the attributes: the same key asks the same.
    const key = JSON.stringify([definition.type, query, window.start, window.time, window.end]);
    found = request.shared === undefined ? await fetch(signal) : citedBy(title, await request.shared.run(key, signal, fetch));
  } catch (error) {
    // A shared fetch stops waiting at this action's signal, which runtimes answer with a failed evidence.
    if (request.shared !== undefined && signal.aborted) {
      const reason = describeFetchFailure(error, signal, "the data source");
      return redactEvidence({ kind: "failed", action: title, reason, ...(link === undefined ? {} : { link }) }, secrets);
    }
    // A runtime that throws has a bug, and what it threw goes to the worker log: redacted like its answers.
    throw redactedError(error, secrets.redacted);
  }
  if (!isEvidenceList(found)) return redactEvidence(found, secrets);
  if (found.length === 0) return redactEvidence({ kind: "none", action: title, what: "findings", ...(link === undefined ? {} : { link }) }, secrets);
  // Each item is redacted: the list has the type the runtime declared.
  return found.map((evidence) => redactEvidence(evidence, secrets)) as readonly Evidence[] as F;
}

/** What a fetch shared with other actions found, citing this action's title (its texts are the same). */
function citedBy<F extends Found>(title: string, found: F): F {
  if (!isEvidenceList(found)) return (found.action === title ? found : { ...found, action: title }) as F;
  return found.map((evidence) => (evidence.action === title ? evidence : { ...evidence, action: title })) as readonly Evidence[] as F;
}

/**
 * The client with the action's deadline on every request, so that its retries never outlive the action. A
 * fetch shared with later actions keeps the deadline of the one that started it, the earliest of theirs.
 */
function withDeadline(http: HttpClient, deadline: number): HttpClient {
  return { request: (url, options) => http.request(url, { deadline, ...options }), close: () => http.close() };
}

/** What a fetch found as a list (one evidence is a list of one). */
export function evidenceList(found: Found): readonly Evidence[] {
  return isEvidenceList(found) ? found : [found];
}

// Array.isArray does not narrow a readonly array out of a union.
function isEvidenceList(found: Found): found is readonly Evidence[] {
  return Array.isArray(found);
}

/** `error` with the secrets taken out of its message and stack (its cause is dropped: it may hold them too). */
function redactedError(error: unknown, secrets: readonly string[]): Error {
  if (!(error instanceof Error)) return new Error(redactSecrets(String(error), secrets));
  const redacted = new Error(redactSecrets(error.message, secrets));
  redacted.name = error.name;
  if (error.stack !== undefined) redacted.stack = redactSecrets(error.stack, secrets);
  return redacted;
}

/** An action bound to its connector, data source and query, ready to run any number of times. */
export interface PreparedAction {
  /** The connector type, for logs. */
  readonly type: string;
  /** It reports the changes in its window (ConnectorDefinition.reportsChanges). */
  readonly reportsChanges: boolean;
  run(context: ActionContext): Promise<Found>;
}

/**
 * Binds an action's query and its data source (both as configuration holds them) to their connector:
 * each is parsed once by the connector's own schema, which gives them its types, and the connector's
 * runtime is loaded on the first run. `connection` is the data source's, set up once at start.
 * @throws ZodError when either does not fit the connector (configuration loading checks both first).
 */
export function prepareAction(connector: Connector, dataSource: unknown, query: unknown, connection: DataSourceConnection): PreparedAction {
  return connector.with((definition) => {
    const configured = definition.dataSource.parse(dataSource);
    const spec = definition.query.parse(query);
    return {
      type: definition.type,
      reportsChanges: definition.reportsChanges?.(spec) ?? false,
      run: async (context) =>
        runConnectorAction(definition, await definition.runtime(), { ...context, ...connection, dataSource: configured, spec }),
    };
  });
}

/** One run of a prepared action: what the engine hands to `runAction` (or to a test's stand-in). */
export interface AnyActionRequest extends ActionContext {
  readonly action: PreparedAction;
}

/** Runs a prepared action with this run's context. */
export function runAction(request: AnyActionRequest): Promise<Found> {
  return request.action.run(request);
}
