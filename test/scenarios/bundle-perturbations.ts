import { findingsOfAction, judgeBundle, type Finding } from "@pes/analysis";
import type { BundleAction, EvidenceBundle, Observation, Verdict } from "@pes/contracts";
import { lookBeforeTrends } from "@pes/engine";

/**
 * The same incident as an on-call engineer would meet it again: paged a few minutes later (the whole
 * timeline shifted, off the scrape grid by a few seconds), its sources answering in another order, its
 * pods under other generated names, beside a healthy series or stream that has nothing to do with it.
 * None of these says anything about the incident, so none may change the verdict's conclusion, its cause
 * or the mitigations offered. Seeded: a seed gives the same perturbation every time, so a failure
 * reproduces.
 */

/**
 * How much later than recorded the incident may be paged, the data staying where it was: a bundle holds
 * about 10 minutes after its issue time, and 5 minutes later the incident phase still shows what it showed.
 */
const PAGED_LATER_MAX_S = 300;

/** A small seeded generator (mulberry32): the same seed, the same numbers. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** A perturbed bundle, the pod names it changed (old → new), and what was done, for a failure's message. */
export interface Perturbed {
  bundle: EvidenceBundle;
  renamed: ReadonlyMap<string, string>;
  applied: string[];
}

/** What the property compares: the conclusion, the cause's and the alternative's kind and subject, the mitigations offered. */
export interface VerdictGist {
  conclusion: Verdict["conclusion"];
  cause?: string;
  alternative?: string;
  mitigations: string[];
}

/**
 * One seeded perturbation of a bundle: always a shift of the whole timeline by 1 to 15 minutes (the issue
 * time and the windows on the minute, the data off the scrape grid by up to 29 s more or less; half the
 * time, the page up to 5 minutes later in the incident than recorded, the data where it was), then,
 * each with even odds, range answers evaluated at another phase of their step, the series, streams,
 * alerts and objects reordered, the pods of each Deployment renamed, an unrelated healthy series added to
 * each range answer and an unrelated healthy stream to each log answer.
 */
export function perturbBundle(original: EvidenceBundle, random: () => number): Perturbed {
  const applied: string[] = [];
  // The issue time moves on the minute; the data moves too, and off the scrape grid by up to 29 s either way.
  const shiftMs = (1 + Math.floor(random() * 15)) * 60_000;
  const offGridMs = Math.round((random() - 0.5) * 58) * 1000;
  // Half the time, paged up to 5 minutes later in the same incident: the data stays where it was.
  const laterMs = random() < 0.5 ? 0 : Math.round(random() * PAGED_LATER_MAX_S) * 1000;
  applied.push(
    `shifted by ${shiftMs / 60_000} min, the data ${offGridMs / 1000} s more${laterMs === 0 ? "" : `, paged ${laterMs / 1000} s later in the incident`}`,
  );
  let bundle = shiftBundle(original, shiftMs, offGridMs - laterMs);
  if (random() < 0.5) {
    bundle = { ...bundle, actions: bundle.actions.map((action) => ({ ...action, observation: reordered(action.observation as Observation, random) })) };
    applied.push("reordered");
  }
  if (random() < 0.5) {
    const phase = 0.2 + random() * 0.6;
    bundle = { ...bundle, actions: bundle.actions.map((action) => ({ ...action, observation: resampled(action.observation as Observation, phase) })) };
    applied.push(`resampled at ${phase.toFixed(2)} of a step`);
  }
  let renamed: ReadonlyMap<string, string> = new Map();
  if (random() < 0.5) {
    renamed = podRenames(bundle, random);
    bundle = renameAll(bundle, renamed);
    applied.push(`renamed ${renamed.size} pods`);
  }
  if (random() < 0.5) {
    bundle = { ...bundle, actions: bundle.actions.map((action) => ({ ...action, observation: withUnrelated(action.observation as Observation, random) })) };
    applied.push("unrelated series and streams added");
  }
  return { bundle, renamed, applied };
}

/**
 * Each action's findings as the engine would have them: first over the playbook's window (the window most
 * actions ran over), then its look-back before a trend (lookBeforeTrends) read from what the bundle holds
 * (its widest answers). A bundle keeps only the second look of an action the engine ran again; reading
 * its first look from the same answer over the narrower window checks that the look-back is decided on
 * the series the finding reports, whichever series the first look picked.
 */
export async function engineFindings(bundle: EvidenceBundle): Promise<Finding[][]> {
  const window = playbookWindow(bundle.actions);
  const dated = (action: BundleAction, start: Date, end: Date): BundleAction => ({
    ...action,
    window: { start: start.toISOString(), time: action.window.time, end: end.toISOString() },
  });
  const runOf = (action: BundleAction) => {
    const findings = findingsOfAction(action);
    return { findings, evidence: findings.map(({ evidence }) => evidence) };
  };
  const first = bundle.actions.map((action) =>
    Date.parse(action.window.start) < window.start.getTime() ? runOf(dated(action, window.start, new Date(action.window.end))) : runOf(action),
  );
  const runs = await lookBeforeTrends(
    first,
    bundle.actions.map(({ observation }) => observation.kind === "kubernetes-rollouts"),
    window,
    async (index, wide) => runOf(dated(bundle.actions[index] as BundleAction, wide.start, new Date((bundle.actions[index] as BundleAction).window.end))),
  );
  return runs.map(({ findings }) => findings);
}

/** The verdict and mitigations of a bundle judged from the engine's looks (engineFindings), as compared. */
export async function gistOf(bundle: EvidenceBundle): Promise<VerdictGist> {
  const { verdict, actionableMitigations } = judgeBundle(bundle, await engineFindings(bundle));
  return {
    conclusion: verdict.conclusion,
    ...(verdict.cause === undefined ? {} : { cause: named(verdict.cause) }),
    ...(verdict.alternative === undefined ? {} : { alternative: named(verdict.alternative) }),
    mitigations: actionableMitigations.map((mitigation) => mitigation.customName ?? mitigation.toolName),
  };
}

/** A gist with the pods renamed as a perturbation renamed them: what the perturbed bundle should give. */
export function renamedGist(gist: VerdictGist, renamed: ReadonlyMap<string, string>): VerdictGist {
  const rename = (text: string) => renameText(text, renamed);
  return {
    conclusion: gist.conclusion,
    ...(gist.cause === undefined ? {} : { cause: rename(gist.cause) }),
    ...(gist.alternative === undefined ? {} : { alternative: rename(gist.alternative) }),
    mitigations: gist.mitigations.map(rename),
  };
}

/** Two gists side by side, line by line, for a failure's message. */
export function sideBySide(left: VerdictGist, right: VerdictGist, titles: [string, string]): string {
  const lines = (gist: VerdictGist) => JSON.stringify(gist, null, 2).split("\n");
  const a = [titles[0], ...lines(left)];
  const b = [titles[1], ...lines(right)];
  const width = Math.max(...a.map((line) => line.length)) + 2;
  return Array.from(
    { length: Math.max(a.length, b.length) },
    (_, index) => `${(a[index] ?? "").padEnd(width)}${a[index] === b[index] ? "  " : "≠ "}${b[index] ?? ""}`,
  ).join("\n");
}

function named(cause: { kind: string; subject?: string | undefined }): string {
  return cause.subject === undefined ? cause.kind : `${cause.kind} ${cause.subject}`;
}

function playbookWindow(actions: readonly BundleAction[]): { start: Date; time: Date; end: Date } {
  const counts = new Map<string, number>();
  for (const { window } of actions) counts.set(window.start, (counts.get(window.start) ?? 0) + 1);
  const [start] = [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? 1 : -1))[0] ?? [];
  const action = actions.find((item) => item.window.start === start) ?? actions[0];
  if (action === undefined) throw new Error("a bundle without actions");
  return { start: new Date(action.window.start), time: new Date(action.window.time), end: new Date(action.window.end) };
}

// --- The shift ---

const ISO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/;

/** The bundle with its issue time and windows `ms` later, and its data `ms + offGridMs` later. */
function shiftBundle(bundle: EvidenceBundle, ms: number, offGridMs: number): EvidenceBundle {
  const iso = (text: string) => new Date(Date.parse(text) + ms).toISOString();
  return {
    ...bundle,
    ...(bundle.recordedAt === undefined ? {} : { recordedAt: iso(bundle.recordedAt) }),
    issue: { ...bundle.issue, time: iso(bundle.issue.time) },
    actions: bundle.actions.map((action) => ({
      ...action,
      window: { start: iso(action.window.start), time: iso(action.window.time), end: iso(action.window.end) },
      observation: shiftObservation(action.observation as Observation, ms + offGridMs),
    })),
  };
}

function shiftObservation(observation: Observation, ms: number): Observation {
  switch (observation.kind) {
    case "prometheus": {
      const { data } = observation;
      const seconds = ms / 1000;
      const shifted =
        data.resultType === "matrix"
          ? {
              ...data,
              result: [...data.result].map((series) => ({ ...series, values: series.values.map(([at, value]) => [at + seconds, value] as [number, string]) })),
            }
          : data.resultType === "vector"
            ? {
                ...data,
                result: [...data.result].map((sample) =>
                  sample.value === undefined ? sample : { ...sample, value: [sample.value[0] + seconds, sample.value[1]] as [number, string] },
                ),
              }
            : { ...data, result: [data.result[0] + seconds, data.result[1]] as typeof data.result };
      const limit =
        observation.limit === undefined
          ? undefined
          : {
              ...observation.limit,
              result: [...observation.limit.result].map((series) => ({
                ...series,
                values: series.values.map(([at, value]) => [at + seconds, value] as [number, string]),
              })),
            };
      return { ...observation, data: shifted as typeof data, ...(limit === undefined ? {} : { limit }) } as Observation;
    }
    case "datadog-metrics":
      return {
        ...observation,
        series: observation.series.map((series) => ({
          ...series,
          pointlist: series.pointlist.map(([at, value]) => [at + ms, value] as [number, number | null]),
        })),
      };
    case "logs":
      return {
        ...observation,
        streams: observation.streams.map((stream) => ({ ...stream, lines: stream.lines.map((line) => ({ ...line, at: line.at + ms })) })),
        counts: observation.counts.map((count) => ({ ...count, at: count.at + ms })),
      };
    default:
      return shiftTexts(observation, ms) as Observation;
  }
}

/** Every ISO 8601 time in a JSON value, shifted: the objects of Kubernetes, alerts and silences date themselves so. */
function shiftTexts(value: unknown, ms: number): unknown {
  if (typeof value === "string") return ISO_TIME.test(value) ? new Date(Date.parse(value) + ms).toISOString() : value;
  if (Array.isArray(value)) return value.map((item) => shiftTexts(item, ms));
  if (value !== null && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, shiftTexts(item, ms)]));
  return value;
}

// --- The order ---

function shuffled<T>(items: Iterable<T>, random: () => number): T[] {
  const copy = [...items];
  for (let index = copy.length - 1; index > 0; index -= 1) {
    const other = Math.floor(random() * (index + 1));
    [copy[index], copy[other]] = [copy[other] as T, copy[index] as T];
  }
  return copy;
}

function reordered(observation: Observation, random: () => number): Observation {
  switch (observation.kind) {
    case "prometheus": {
      const { data } = observation;
      const result = data.resultType === "matrix" || data.resultType === "vector" ? { ...data, result: shuffled<unknown>(data.result, random) } : data;
      const limit = observation.limit === undefined ? undefined : { ...observation.limit, result: shuffled(observation.limit.result, random) };
      return { ...observation, data: result as typeof data, ...(limit === undefined ? {} : { limit }) } as Observation;
    }
    case "datadog-metrics":
      return { ...observation, series: shuffled(observation.series, random) };
    case "logs":
      return { ...observation, streams: shuffled(observation.streams, random) };
    case "kubernetes-events":
    case "kubernetes-pods":
      return { ...observation, items: shuffled<unknown>(observation.items, random) } as Observation;
    case "kubernetes-rollouts":
      return { ...observation, deployments: shuffled(observation.deployments, random), replicaSets: shuffled(observation.replicaSets, random) };
    case "alertmanager":
      return { ...observation, alerts: shuffled(observation.alerts, random) };
    default:
      return observation;
  }
}

// --- The pods' names ---

/** A pod's name as a Deployment generates it: the ReplicaSet's name and five characters. */
const GENERATED_POD = /^(.+-[a-z0-9]{5,10})-([a-z0-9]{5})$/;
const POD_CHARACTERS = "bcdfghjklmnpqrstvwxz2456789";

/** New names for the pods the bundle names (by a `pod` label or as Pods), within the same ReplicaSet. */
function podRenames(bundle: EvidenceBundle, random: () => number): Map<string, string> {
  const names = new Set<string>();
  const collect = (value: unknown, key?: string): void => {
    if (typeof value === "string") {
      if ((key === "pod" || key === "name") && GENERATED_POD.test(value)) names.add(value);
    } else if (Array.isArray(value)) for (const item of value) collect(item);
    else if (value !== null && typeof value === "object") for (const [name, item] of Object.entries(value)) collect(item, name);
  };
  for (const action of bundle.actions) collect(action.observation);
  const renames = new Map<string, string>();
  const taken = new Set(names);
  for (const name of [...names].sort()) {
    const prefix = (GENERATED_POD.exec(name) as RegExpExecArray)[1];
    let fresh = name;
    while (taken.has(fresh)) fresh = `${prefix}-${Array.from({ length: 5 }, () => POD_CHARACTERS[Math.floor(random() * POD_CHARACTERS.length)]).join("")}`;
    taken.add(fresh);
    renames.set(name, fresh);
  }
  return renames;
}

function renameText(text: string, renames: ReadonlyMap<string, string>): string {
  if (renames.size === 0) return text;
  const pattern = new RegExp(
    `(?<![A-Za-z0-9-])(${[...renames.keys()].map((name) => name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|")})(?![A-Za-z0-9-])`,
    "g",
  );
  return text.replace(pattern, (name) => renames.get(name) ?? name);
}

/** The bundle with every pod renamed wherever it is written (labels, objects, events' messages, log lines). */
function renameAll(bundle: EvidenceBundle, renames: ReadonlyMap<string, string>): EvidenceBundle {
  return { ...bundle, actions: JSON.parse(renameText(JSON.stringify(bundle.actions), renames)) as EvidenceBundle["actions"] };
}

// --- Unrelated, healthy data ---

/**
 * A range answer with one more series, about a service nothing else names, sampled when another series
 * is and steady around that series' first value; a log answer with one more stream of a line that recurs
 * evenly through the window.
 */
function withUnrelated(observation: Observation, random: () => number): Observation {
  if (observation.kind === "prometheus" && observation.data.resultType === "matrix") {
    const result = [...(observation.data.result as Iterable<{ metric: Record<string, string>; values: Array<[number, string]> }>)];
    const model = result[Math.floor(random() * result.length)];
    const level = Number(model?.values.find(([, value]) => Number.isFinite(Number(value)))?.[1] ?? Number.NaN);
    if (model === undefined || !Number.isFinite(level)) return observation;
    const { node: _node, zone: _zone, pod: _pod, instance: _instance, ...labels } = model.metric;
    const values = model.values.map(([at]) => [at, String(level * (1 + (random() - 0.5) * 0.02))] as [number, string]);
    const series = { metric: { ...labels, service: "unrelated-ledger", pod: "unrelated-ledger-6d4f9-q2w7x" }, values };
    return { ...observation, data: { ...observation.data, result: [...result, series] } };
  }
  if (observation.kind === "logs" && observation.streams.length > 0) {
    const ats = observation.counts.map(({ at }) => at);
    if (ats.length === 0) return observation;
    const lines = ats.filter((_, index) => index % 2 === 0).map((at) => ({ at: at + 1000, line: 'level=info msg="ledger reconciled" batch=<id>' }));
    return { ...observation, streams: [...observation.streams, { labels: { app: "unrelated-ledger" }, lines }] };
  }
  return observation;
}

/** Two samples further apart than this share of the larger are a jump, not a slope (resampled). */
const JUMP_SHARE = 0.1;

/**
 * A range answer as Prometheus would give it evaluated `phase` of a step later: each sample interpolated
 * between two of the answer's (the last dropped), as a query at another moment of the scrape cycle reads,
 * but a jump held at its earlier value.
 */
function resampled(observation: Observation, phase: number): Observation {
  if (observation.kind !== "prometheus" || observation.data.resultType !== "matrix") return observation;
  const result = [...observation.data.result].map((series) => {
    const values = series.values.flatMap(([at, value], index) => {
      const next = series.values[index + 1];
      if (next === undefined) return [];
      const step = next[0] - at;
      const [from, to] = [Number(value), Number(next[1])];
      // A jump between two samples (a container killed, a counter reset) happened at one scrape: held, not smeared.
      const jump = Math.abs(to - from) > JUMP_SHARE * Math.max(Math.abs(from), Math.abs(to));
      return [[at + phase * step, String(jump ? from : from + phase * (to - from))] as [number, string]];
    });
    return { ...series, values };
  });
  return { ...observation, data: { ...observation.data, result } };
}
