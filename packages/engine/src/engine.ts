import { context } from "@opentelemetry/api";
import {
  actionResultOf,
  bottomLineOf,
  chartOf,
  fitBundle,
  formatDuration,
  judgeExecution,
  roleOf,
  shortAnswer,
  summarizeGadget,
  type Evidence,
  type Finding,
  type Role,
} from "@pes/analysis";
import type { Catalog, CatalogSecrets } from "@pes/config";
import {
  connectDataSource,
  connectorRegistry,
  mitigationLinksOf,
  NO_SECRETS,
  prepareAction,
  runAction,
  type AnyActionRequest,
  type ConnectorRegistry,
  type DataSource,
  type DataSourceConnection,
  type DataSourceMitigationLinks,
  type Observed,
  type PreparedAction,
  type TimeWindow,
} from "@pes/connectors";
import type { ActionResult, ChartData, EvidenceBundle, ExecutionJob, GadgetHighlights, PlaybookExecutionResult } from "@pes/contracts";
import type { Logger } from "@pes/logger";
import {
  gadgetInstances,
  instanceAttributes,
  offeredMitigations,
  renderArgs,
  renderMitigationTemplates,
  type ActionDefinition,
  type GadgetInstance,
} from "@pes/playbooks";
import { fillTextOrKeep } from "@pes/templates";
import { inActionSpan } from "./action-span.js";
import { createConcurrencyLimit } from "./concurrency-limit.js";
import { bundleOf, evidenceOf } from "./evidence-bundle.js";
import { createLocalQuerySlots, inQuerySlot, NoQuerySlotError, type QuerySlotLimit, type QuerySlots } from "./query-slots.js";
import { createOncePerQuery, sameQueryKey } from "./same-query.js";
import { summarizeWithLanguageModel, type LanguageModelOptions } from "./language-model-summary.js";
import { issueWindow } from "./time-window.js";
import { lookBeforeTrends } from "./trend-lookback.js";
import { errorMessage } from "@pes/contracts";

export interface EngineDeps {
  catalog: Catalog;
  /**
   * Every data source's secrets, resolved once at start (resolveCatalogSecrets): handed to its connector
   * with each action. A data source without an entry has none.
   */
  secrets: CatalogSecrets;
  logger: Logger;
  /** Each action's own deadline, from the moment it starts. */
  actionTimeoutMs: number;
  /** Actions running at once across all executions of this engine (one engine per worker process). */
  maxConcurrentActions: number;
  /** The connectors the catalog was loaded with (loadConfig's); default: the stock connectors. */
  connectors?: ConnectorRegistry;
  /**
   * Where the query slots of data sources that set `maxConcurrentQueries` are taken: the worker's are
   * shared through Redis by every worker; default: slots within this engine only.
   */
  querySlots?: QuerySlots;
  /** Runs one prepared action; replaced in tests that need an action to misbehave. */
  runAction?: (request: AnyActionRequest) => Promise<Observed>;
  /**
   * Keeps the evidence bundle of an execution of an organization that opts in (`evidence.keep`), given
   * its id: called once its result is known. A failure to keep it is logged; the result stands.
   */
  keepEvidence?: (kept: KeptEvidence) => Promise<void>;
  /**
   * An OpenAI-compatible model for one optional pass over the findings (language-model-summary.ts); none:
   * the deterministic text only, and no `analysis` in the result.
   */
  languageModel?: LanguageModelOptions;
  /** Told of every action as it ends, for metrics: it must be quick and must not throw. */
  onActionFinished?: (report: ActionReport) => void;
  now?: () => Date;
}

/**
 * How an action ended: `ok` (whatever it found), `failed` (the data source failed it, or it could not
 * run), `timeout` (its own deadline), `cancelled` (the execution's signal), `skipped` (the issue lacks
 * an attribute its query needs).
 */
export type ActionOutcome = "ok" | "failed" | "timeout" | "cancelled" | "skipped";

/** One finished action, named by configuration only: never a URL, a query, a secret or an attribute value. */
export interface ActionReport {
  orgId: string;
  /** The connector type (`prometheus`, `http`…), or `unknown` when no connector takes the action. */
  connector: string;
  /** The data source's name in the organization's configuration. */
  dataSource: string;
  outcome: ActionOutcome;
  /** How long it ran; absent when it never started. */
  seconds?: number;
}

/** An execution's evidence bundle, to be kept for the organization's retention. */
export interface KeptEvidence {
  orgId: string;
  retentionDays: number;
  /** The organization's cap on a bundle's JSON: the bundle was cut to fit it (fitBundle). */
  maxBytes: number;
  bundle: EvidenceBundle;
}

/** What one action ran into: its evidence and, when it asked its data source, what it observed. */
interface ActionRun {
  evidence: readonly Evidence[];
  observed?: Observed;
}

/** An action's run over the window it ran over (the playbook's, or a look-back's wider one). */
interface WindowedRun extends ActionRun {
  window: TimeWindow;
}

export interface Engine {
  /**
   * Runs a resolved job: every action of every gadget concurrently (bounded), each with its own deadline,
   * then judges their evidence (the verdict) and words the per-gadget and bottom-line summaries
   * (`@pes/analysis`). A failing action is a finding, never a failed execution; `{ error }` only when the
   * job names a playbook this worker does not know. With the execution's id, the evidence bundle of an
   * organization that keeps them is handed to `keepEvidence`. Beside the result, what its actions' charts
   * are drawn from (`chartOf`: a metric finding's series, a log finding's counts), by the action's index in
   * `actionResults`: made from the points already fetched.
   */
  investigate(job: ExecutionJob, signal?: AbortSignal, executionId?: string): Promise<Investigation>;
  /** Closes the data sources' HTTP clients (their keep-alive connections). */
  close(): Promise<void>;
}

/** An execution's result, and the data of the charts its actions can draw, by action index. */
export interface Investigation {
  result: PlaybookExecutionResult;
  charts: Map<number, ChartData>;
}

/** An action of a playbook, bound to its connector and data source once, when the engine is built. */
interface PreparedStep {
  gadgetIndex: number;
  definition: ActionDefinition;
  /** The connector type that takes the action (`unknown` if none), for metrics. */
  connector: string;
  /** Ready to run, or why it cannot run (a data source missing or of the wrong type). */
  prepared: PreparedAction | string;
  /** The data source's limit of queries at once, when it sets one. */
  slots?: QuerySlotLimit;
  /** What it asks (sameQueryKey): an execution runs each once. Absent when it cannot run. */
  queryKey?: string;
}

interface PlannedAction extends PreparedStep {
  title: string;
  gadgetTitle: string;
  /** Which instance of its gadget (gadgetInstances): one per upstream of a gadget that declares them. */
  instance: GadgetInstance;
  /** Its gadget's instance among the execution's, in playbook order. */
  instanceIndex: number;
  /** The issue's attributes, with the instance's upstream bound. */
  attributes: Readonly<Record<string, string>>;
}

const ABORTED = Symbol("aborted");
/** How long past its deadline an action that ignores its signal may take before the engine stops waiting. */
const ABORT_GRACE_MS = 1_000;

/**
 * Builds the engine: every data source's HTTP client (its TLS settings and proxy, one keep-alive pool
 * each) and its mitigation links, and every action bound to its connector. Nothing runs until
 * `investigate` is called.
 * @throws Error naming the organization and data source whose TLS settings are unusable.
 */
export function createEngine(deps: EngineDeps): Engine {
  const limit = createConcurrencyLimit(deps.maxConcurrentActions);
  const run = deps.runAction ?? runAction;
  const querySlots = deps.querySlots ?? createLocalQuerySlots();
  const now = deps.now ?? (() => new Date());
  const { logger, actionTimeoutMs } = deps;
  const connectors = deps.connectors ?? connectorRegistry;
  const connections = connectDataSources(deps.catalog, deps.secrets);
  const steps = prepareSteps(deps.catalog, connections, connectors, logger);
  const mitigationLinks = bindMitigationLinks(deps.catalog, connectors);

  async function runOne(
    orgId: string,
    planned: PlannedAction,
    attributes: Readonly<Record<string, string>>,
    window: TimeWindow,
    outer: AbortSignal | undefined,
  ): Promise<ActionRun> {
    const { title, definition, prepared } = planned;
    const failed = (reason: string, link?: string): Evidence => ({ kind: "failed", action: title, reason, ...(link === undefined ? {} : { link }) });
    const report = (outcome: ActionOutcome, startedAt?: number) =>
      deps.onActionFinished?.({
        orgId,
        connector: planned.connector,
        dataSource: definition.dataSource,
        outcome,
        ...(startedAt === undefined ? {} : { seconds: (performance.now() - startedAt) / 1_000 }),
      });
    if (outer?.aborted) {
      report("cancelled");
      return { evidence: [failed("cancelled before it started")] };
    }
    // One plain controller per action: AbortSignal.timeout/any build transferable signals, which the
    // benchmark profile showed costing more than the rest of the engine's bookkeeping. Both ways it can
    // abort are ours, so the grace period starts there instead of in another listener on the signal.
    const controller = new AbortController();
    const signal = controller.signal;
    let timedOut = false;
    let giveUp = () => {};
    // Connectors end at the signal with their own evidence (which keeps its link); this only cuts off one
    // that ignores the signal, a moment later.
    const abandoned = new Promise<typeof ABORTED>((resolve) => {
      giveUp = () => resolve(ABORTED);
    });
    let grace: NodeJS.Timeout | undefined;
    const stop = (reason: unknown) => {
      if (signal.aborted) return;
      controller.abort(reason);
      grace = setTimeout(giveUp, ABORT_GRACE_MS);
    };
    // When the timer fires, at the earliest: the HTTP client spends no retry past it.
    const deadline = Date.now() + actionTimeoutMs;
    const timer = setTimeout(() => {
      timedOut = true;
      stop(new DOMException(`timed out after ${actionTimeoutMs} ms`, "TimeoutError"));
    }, actionTimeoutMs);
    const cancel = () => stop(outer?.reason);
    outer?.addEventListener("abort", cancel, { once: true });
    const startedAt = performance.now();
    const ended = (link?: string) => {
      report(timedOut ? "timeout" : "cancelled", startedAt);
      return timedOut ? failed(`timed out after ${formatDuration(actionTimeoutMs)}`, link) : failed("cancelled before it finished", link);
    };
    try {
      if (typeof prepared === "string") {
        report("failed");
        return { evidence: [failed(prepared)] };
      }
      // A slot is held for the action's deadline at most (its lease frees it after that, should this process die).
      const slotOptions = {
        timeoutMs: actionTimeoutMs,
        leaseMs: actionTimeoutMs + ABORT_GRACE_MS,
        signal,
        onReleaseError: (error: unknown) => logger.warn({ err: error, dataSource: definition.dataSource }, "could not give back a query slot"),
      };
      const ran = inQuerySlot(querySlots, planned.slots, slotOptions, () => run({ action: prepared, title, attributes, window, signal, deadline }));
      // Whatever the action does after the race is decided is handled by the race: never unhandled.
      const observed = await Promise.race([ran, abandoned]);
      if (observed === ABORTED) return { evidence: [ended()] };
      // The analysis reads what the action observed: the one way from a data source's answer to evidence.
      // An upstream's instance reads its answer as it is: the issue's attributes are the paged service's.
      const evidence = evidenceOf(observed, title, window, planned.instance.upstream === undefined ? attributes : undefined);
      const [only] = evidence;
      if (only === undefined) return { evidence: [{ kind: "none", action: title, what: "findings" }], observed };
      if (evidence.length === 1 && only.kind === "failed" && signal.aborted) {
        const stopped = ended(only.link);
        return { evidence: [stopped], observed: { ...observed, observation: { kind: "failed", reason: stopped.kind === "failed" ? stopped.reason : only.reason } } };
      }
      if (evidence.length === 1 && only.kind === "skipped") report("skipped");
      else report(evidence.length === 1 && only.kind === "failed" ? "failed" : "ok", startedAt);
      return { evidence, observed };
    } catch (error) {
      if (error instanceof NoQuerySlotError) {
        report(timedOut ? "timeout" : "failed", startedAt);
        return { evidence: [failed(error.message)] };
      }
      if (signal.aborted) return { evidence: [ended()] };
      logger.warn({ err: error, action: title, dataSource: definition.dataSource }, "action threw instead of returning evidence");
      report("failed", startedAt);
      return { evidence: [failed("failed unexpectedly (details in the worker log)")] };
    } finally {
      clearTimeout(timer);
      clearTimeout(grace);
      outer?.removeEventListener("abort", cancel);
    }
  }

  const engine: Engine = {
    async close() {
      await Promise.all([...connections.values()].flatMap((byName) => [...byName.values()].map((connection) => connection.http.close())));
    },
    async investigate(job, signal, executionId) {
      const org = deps.catalog.organizations.get(job.orgId);
      const playbook = org?.playbooks.get(job.bookName);
      const playbookSteps = steps.get(job.orgId)?.get(job.bookName);
      if (org === undefined || playbook === undefined || playbookSteps === undefined) {
        // The API validated the name against its own catalog: this is configuration drift between the two.
        logger.warn({ orgId: job.orgId, requestId: job.requestId, bookName: job.bookName }, "job names an unknown playbook");
        return { result: { error: `Unknown playbook "${job.bookName}" for this organization` }, charts: new Map() };
      }
      const time = new Date(job.time);
      if (Number.isNaN(time.getTime())) return { result: { error: `Invalid issue time "${job.time}"` }, charts: new Map() };
      const startedAt = performance.now();
      const { attributes } = job;
      const window = issueWindow(time, playbook.window, now());

      // A gadget that declares upstreams runs once per upstream, `{{upstream}}` bound to its name.
      const instances = playbook.gadgets.flatMap((gadget, gadgetIndex) =>
        gadgetInstances(gadget, attributes).map((instance) => {
          const bound = instanceAttributes(attributes, instance);
          return { gadget, gadgetIndex, instance, attributes: bound, title: fillTextOrKeep(gadget.title, bound) };
        }),
      );
      const planned: PlannedAction[] = instances.flatMap((instance, instanceIndex) =>
        playbookSteps
          .filter((step) => step.gadgetIndex === instance.gadgetIndex)
          .map((step) => ({
            ...step,
            // Instances fill the same query with another upstream: not the same query.
            ...(step.queryKey === undefined || instance.instance.upstream === undefined ? {} : { queryKey: `${step.queryKey}\u0000${instance.instance.upstream}` }),
            title: fillTextOrKeep(step.definition.title, instance.attributes),
            gadgetTitle: instance.title,
            instance: instance.instance,
            instanceIndex,
            attributes: instance.attributes,
          })),
      );
      // An abort of `signal` drains the queue quickly: running actions end at once (their signals include
      // it, and the race in runOne ends those that ignore it) and queued ones return without starting.
      // Each action's span is a child of the job's, whichever action's turn ends its wait in the limit.
      const parent = context.active();
      // One list of evidence per action (most actions find one thing; some list several).
      // The same query over the same window to the same data source is fetched once per execution.
      const oncePerQuery = createOncePerQuery<WindowedRun>();
      const runIn = (action: PlannedAction, over: TimeWindow): Promise<WindowedRun> =>
        limit.run(async () => ({
          ...(await inActionSpan(parent, actionSpanOf(action, job.requestId), () => runOne(job.orgId, action, action.attributes, over, signal))),
          window: over,
        }));
      const firstLook: WindowedRun[] = await Promise.all(planned.map((action) => oncePerQuery(action.queryKey, action.title, () => runIn(action, window))));
      // A symptom that was already climbing when the window began: date its start, and find the changes
      // before it. A run again replaces the first one's evidence and observation both (and its window), so
      // the bundle keeps what the verdict was judged from.
      const runs = await lookBeforeTrends(
        firstLook,
        planned.map((action) => typeof action.prepared !== "string" && action.prepared.reportsChanges),
        window,
        (index, over) => {
          const action = planned[index];
          return action === undefined ? Promise.resolve({ evidence: [], window: over }) : runIn(action, over);
        },
      );
      const perAction = runs.map((run) => run.evidence);
      const findingsOf = (keep: (action: PlannedAction) => boolean): Finding[] =>
        planned.flatMap((action, index) =>
          keep(action)
            ? (perAction[index] ?? []).map((evidence) => ({
                gadget: action.gadgetTitle,
                evidence,
                ...(action.instance.upstream === undefined ? {} : { upstream: action.instance.upstream }),
              }))
            : [],
        );
      const findings = findingsOf(() => true);

      // Evidence in, words out: the analysis ranks the findings and renders every text from them.
      const actionResults: ActionResult[] = perAction.map((evidence) => actionResultOf(evidence, time));
      const gadgetsHighlights: GadgetHighlights[] = instances.map(({ gadget, attributes: bound, title }, instanceIndex) => ({
        title,
        ...(gadget.args === undefined ? {} : { args: renderArgs(gadget.args, bound) }),
        highlights: summarizeGadget(
          findingsOf((action) => action.instanceIndex === instanceIndex),
          time,
        ),
      }));
      const upstreams = [...new Set(instances.flatMap(({ instance }) => (instance.upstream === undefined ? [] : [instance.upstream])))];
      // One judgement: the verdict in the result, the bottom line's words and the mitigations all read it.
      // The issue's attributes tell the page from the other alerts; the upstreams, who the paged service calls.
      const judgement = judgeExecution(findings, { time, attributes, upstreams });
      const deterministic = bottomLineOf(judgement, attributes);
      const summary =
        deps.languageModel === undefined
          ? undefined
          : await summarizeWithLanguageModel(deps.languageModel, { attributes, findings, judgement, deterministic }, logger.child({ requestId: job.requestId }), signal);
      // A model may reword the bottom line; the verdict stays the rules' own.
      const highlights = summary?.highlights ?? deterministic;

      // What each action answered, for an operator tracing one execution (LOG_LEVEL=debug). The answers
      // come from data sources: the runner redacts the data source's secrets before they get here.
      if (logger.isLevelEnabled("debug")) {
        for (const { gadget, evidence } of findings) {
          logger.debug(
            { requestId: job.requestId, gadget, action: evidence.action, kind: evidence.kind, shortAnswer: shortAnswer(evidence, time) },
            "action outcome",
          );
        }
      }
      logger.info(
        {
          orgId: job.orgId,
          requestId: job.requestId,
          bookName: job.bookName,
          actions: perAction.length,
          ...countByRole(findings),
          durationMs: Math.round(performance.now() - startedAt),
        },
        "execution finished",
      );
      // Rendered once for the issue, offered by the findings: a bundle keeps both, so a replay offers the same.
      const mitigations = renderMitigationTemplates(playbook.mitigations, attributes, { time, mitigationLinks: (name) => mitigationLinks.get(org.id)?.get(name) });
      const actionableMitigations = offeredMitigations(mitigations, judgement.ranking, time);
      if (executionId !== undefined && org.evidence?.keep === true && deps.keepEvidence !== undefined) {
        const actions = planned.map((action, index) => ({
          gadget: action.gadgetTitle,
          title: action.title,
          connector: action.connector,
          ...(action.instance.upstream === undefined ? {} : { upstream: action.instance.upstream }),
          window: runs[index]?.window ?? window,
          evidence: perAction[index] ?? [],
          ...(runs[index]?.observed === undefined ? {} : { observed: runs[index].observed }),
        }));
        const offered = new Set(actionableMitigations);
        const kept = mitigations.map((rendered) => ({ ...rendered, offered: offered.has(rendered.mitigation) }));
        // Within the organization's cap: observations cut (and marked) where the verdict allows it.
        const { retentionDays, maxBytes } = org.evidence;
        // The findings as judged, per action: only the observations that are cut are read again.
        const judged = planned.map((action) => findingsOf((other) => other === action));
        const bundle = fitBundle(bundleOf(executionId, job, upstreams, actions, kept, judgement.verdict, now()), maxBytes, { findings: judged });
        await deps.keepEvidence({ orgId: job.orgId, retentionDays, maxBytes, bundle }).catch((error: unknown) => {
          logger.warn({ err: error, requestId: job.requestId }, "could not keep the execution's evidence bundle");
        });
      }
      const result: PlaybookExecutionResult = {
        highlights,
        verdict: judgement.verdict,
        gadgetsHighlights,
        actionableMitigations,
        actionResults,
        ...(summary === undefined ? {} : { analysis: summary.analysis }),
      };
      return { result, charts: chartsOf(planned, runs, logger.child({ requestId: job.requestId })) };
    },
  };
  return engine;
}

/**
 * The data of each action's chart, from what it observed over the window it ran (a look-back's wider one
 * included) and its evidence, with the data source's secrets redacted from its texts. A chart that cannot
 * be made is logged and left out: it never costs the execution.
 */
function chartsOf(planned: readonly PlannedAction[], runs: readonly WindowedRun[], logger: Logger): Map<number, ChartData> {
  const charts = new Map<number, ChartData>();
  runs.forEach((run, index) => {
    const title = planned[index]?.title;
    if (run.observed === undefined || title === undefined) return;
    const { observation, redact } = run.observed;
    try {
      const chart = chartOf(observation, run.evidence, { action: title, window: run.window });
      if (chart !== undefined) charts.set(index, redactedChart(chart, redact));
    } catch (error) {
      logger.warn({ err: error, action: title }, "could not make the action's chart");
    }
  });
  return charts;
}

function redactedChart(chart: ChartData, redact: (text: string) => string): ChartData {
  return {
    ...chart,
    title: redact(chart.title),
    series: chart.series.map((series) => ({ ...series, name: redact(series.name) })),
    ...(chart.limit === undefined ? {} : { limit: { ...chart.limit, name: redact(chart.limit.name) } }),
  };
}

/** What an action's span says of it: its connector and data source by name, never its title or query. */
function actionSpanOf(planned: PlannedAction, requestId: string): { connectorType: string; dataSource: string; requestId: string } {
  const { prepared, definition } = planned;
  return { connectorType: typeof prepared === "string" ? "unavailable" : prepared.type, dataSource: definition.dataSource, requestId };
}

/**
 * Every action of every playbook, bound to its connector (the registry's, by the action's query key) and
 * to its data source: once per engine, so that an execution only fills titles and runs.
 */
function prepareSteps(
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

/** One connection per data source of every organization: its HTTP client and its secrets. */
function connectDataSources(catalog: Catalog, secrets: CatalogSecrets): Map<string, Map<string, DataSourceConnection>> {
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
function bindMitigationLinks(catalog: Catalog, connectors: ConnectorRegistry): Map<string, Map<string, DataSourceMitigationLinks>> {
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

/** How many actions found what: symptoms, changes, normal, answers, no data, failed, skipped. */
function countByRole(findings: readonly Finding[]): Record<Role, number> {
  const counts: Record<Role, number> = { symptom: 0, change: 0, normal: 0, answer: 0, "no-data": 0, failed: 0, skipped: 0 };
  for (const { evidence } of findings) counts[roleOf(evidence)] += 1;
  return counts;
}
