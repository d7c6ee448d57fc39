import type { Observation } from "@pes/contracts";
import { MissingAttributesError } from "@pes/templates";
import type { ActionContext, ActionRequest, ConnectorRuntime, DataSourceBase, DataSourceConnection } from "./connector.js";
import type { Connector, ConnectorDefinition } from "./connector-definition.js";
import { describeFetchFailure } from "./fetch-failure.js";
import type { HttpClient } from "./http-client.js";
import { fillQuery } from "./query-templates.js";
import { redactSecrets } from "./redaction.js";
import { errorMessage } from "@pes/contracts";

/** What one run of an action observed, and what the engine needs to read and keep it. */
export interface Observed<O extends Observation = Observation> {
  /** What the data source answered (a `skipped` or `failed` one when nothing usable was asked or answered). */
  observation: O;
  /** The query as it was sent, every template filled: absent when it could not be filled. */
  query?: unknown;
  /** The connector's deep link for the query, when it has one: the evidence carries it. */
  link?: string;
  /**
   * Bytes of the data source's answers this run read (the answer each request gave): absent when it
   * read none itself, as when it joined a fetch another action started. An execution's budget counts them.
   */
  bytesRead?: number;
  /**
   * Takes the data source's secrets out of a text: a source may echo them (an error text quoting the
   * Authorization header, an API echoing a header), so every text read from the observation passes here.
   */
  redact(text: string): string;
}

/**
 * Runs an action with one connector: fills the query's template fields with the encodings the connector
 * declares, builds its link, then lets it fetch. An attribute the issue lacks makes the observation
 * `skipped`; a value a template cannot hold makes it `failed` before anything is sent. This is the one
 * place where runtimes are called.
 */
export async function runConnectorAction<DS extends DataSourceBase, Q, O extends Observation>(
  definition: ConnectorDefinition<DS, Q>,
  runtime: ConnectorRuntime<DS, Q, O>,
  request: ActionRequest<DS, Q>,
): Promise<Observed<O | Observation>> {
  const { dataSource, spec, attributes, window, signal, deadline, secrets } = request;
  const redact = secrets.redacted.length === 0 ? (text: string) => text : (text: string) => redactSecrets(text, secrets.redacted);
  const read = { bytes: 0 };
  const http = countingBytes(request.http, deadline, read);
  let query: Q;
  let link: string | undefined;
  try {
    query = fillQuery(spec, definition.templates, attributes, dataSource);
    link = definition.link(dataSource, query, window);
  } catch (error) {
    if (error instanceof MissingAttributesError) return { observation: { kind: "skipped", missing: [...error.names] }, redact };
    const reason = `could not build the ${definition.builds}: ${errorMessage(error)}`;
    return { observation: { kind: "failed", reason }, redact };
  }
  const asked = { query, ...(link === undefined ? {} : { link }), redact };
  try {
    const fetch = (fetchSignal: AbortSignal) => runtime.fetch({ dataSource, query, window, signal: fetchSignal, secrets, http });
    // Runtimes read the filled query and the window, never the attributes: the same key asks the same.
    const key = JSON.stringify([definition.type, query, window.start, window.time, window.end]);
    const observation = request.shared === undefined ? await fetch(signal) : await request.shared.run(key, signal, fetch);
    return { ...asked, observation, ...bytesOf(read) };
  } catch (error) {
    // A shared fetch stops waiting at this action's signal, as a runtime does on its own.
    if (request.shared !== undefined && signal.aborted)
      return { ...asked, observation: { kind: "failed", reason: describeFetchFailure(error, signal, "the data source") }, ...bytesOf(read) };
    // A runtime that throws has a bug, and what it threw goes to the worker log: redacted like its answers.
    throw redactedError(error, secrets.redacted);
  }
}

/**
 * The client with the action's deadline on every request, so that its retries never outlive the action,
 * counting the bytes of the answers it reads into `read`. A fetch shared with later actions keeps the
 * deadline of the one that started it, the earliest of theirs, and its bytes count for that one alone.
 */
function countingBytes(http: HttpClient, deadline: number | undefined, read: { bytes: number }): HttpClient {
  return {
    request: async (url, options) => {
      const answer = await http.request(url, deadline === undefined ? options : { deadline, ...options });
      read.bytes += answer.body.length;
      return answer;
    },
    close: () => http.close(),
  };
}

function bytesOf(read: { bytes: number }): Pick<Observed, "bytesRead"> {
  return read.bytes === 0 ? {} : { bytesRead: read.bytes };
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
  run(context: ActionContext): Promise<Observed>;
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
      run: async (context) => runConnectorAction(definition, await definition.runtime(), { ...context, ...connection, dataSource: configured, spec }),
    };
  });
}

/** One run of a prepared action: what the engine hands to `runAction` (or to a test's stand-in). */
export interface AnyActionRequest extends ActionContext {
  readonly action: PreparedAction;
}

/** Runs a prepared action with this run's context. */
export function runAction(request: AnyActionRequest): Promise<Observed> {
  return request.action.run(request);
}
