import type { BundleAction, EvidenceBundle, ObservationCut } from "@pes/contracts";
import type { Labels } from "./evidence.js";
import { MAX_TEMPLATE_LINE_CHARS } from "./log-templates.js";
import type { Finding } from "./ranking.js";
import { findingsOfAction, judgeBundle } from "./replay.js";

/**
 * Texts are cut after these many characters, the longer first: the analysis reads no further into a log
 * line than MAX_TEMPLATE_LINE_CHARS for its pattern, so that cut changes no pattern.
 */
const TEXT_LIMITS = [MAX_TEMPLATE_LINE_CHARS, 200] as const;
/**
 * How many cuts are tried against the verdict (each reads the cut observation again) before the rest
 * are made without: a bundle of a few very large answers is cut in a few reads, not dozens.
 */
const MAX_VERIFIED_CUTS = 24;

/** One way to make an observation smaller: thin the lists at a path, or shorten its long texts. */
type Move = { kind: "thin"; path: string } | { kind: "shorten"; maxChars: number };

const thin = (path: string): Move => ({ kind: "thin", path });
const shorten = (maxChars: number): Move => ({ kind: "shorten", maxChars });
const [LONG, SHORT] = TEXT_LIMITS;

/**
 * The cuts each kind of observation takes, in the order they are tried: a metric's other series before
 * its samples (the series its evidence names are always kept, and a change point needs its samples), a
 * log line's tail before its lines, the lines before their streams. Lists of which every element is read
 * as a whole (a list's items, alerts) are thinned; tuples (a sample, a point) never. Counts per step are
 * never cut: they are what rates are computed from, and they are small.
 */
const MOVES: Readonly<Record<string, readonly Move[]>> = {
  prometheus: [thin("data.result"), thin("limit.result"), thin("data.result.*.values"), thin("limit.result.*.values"), shorten(LONG), shorten(SHORT)],
  "datadog-metrics": [thin("series"), thin("series.*.pointlist"), shorten(LONG), shorten(SHORT)],
  logs: [shorten(LONG), thin("streams.*.lines"), thin("streams"), shorten(SHORT)],
  "kubernetes-events": [shorten(LONG), thin("items"), shorten(SHORT)],
  "kubernetes-pods": [shorten(LONG), thin("items"), shorten(SHORT)],
  "kubernetes-rollouts": [shorten(LONG), thin("replicaSets"), thin("deployments"), shorten(SHORT)],
  "kubernetes-state": [shorten(LONG), thin("containerLogs.*.lines"), thin("events"), thin("replicaSets"), shorten(SHORT)],
  alertmanager: [shorten(LONG), thin("alerts"), thin("silences"), shorten(SHORT)],
};
const TEXT_MOVES: readonly Move[] = [shorten(LONG), shorten(SHORT)];

export interface FitOptions {
  /**
   * Each action's findings as the execution had them (in the bundle's order), so that only the actions
   * that are cut are read again; default: every observation is read from the bundle.
   */
  findings?: ReadonlyArray<readonly Finding[]>;
}

/**
 * The bundle, cut to at most `maxBytes` of JSON (UTF-8) when it is larger: the largest observation first,
 * each cut (ObservationCut: thinning a list to one element in every few, the last always; shortening
 * long texts) kept only when the bundle still judges to the verdict and mitigations it judged to whole.
 * When no such cut is left (or MAX_VERIFIED_CUTS were tried) and it is still too large, the cuts are made
 * whatever they change, then the largest observations are left out, until it fits. Each cut action says
 * how in `truncated`, and the bundle carries its size before (`truncated.bytes`). A bundle within the cap
 * is returned as it is.
 *
 * Pure: the same bundle and cap give the same cuts. A replay reads a cut observation like any other.
 */
export function fitBundle(bundle: EvidenceBundle, maxBytes: number, options: FitOptions = {}): EvidenceBundle {
  const actions = [...bundle.actions];
  const actionBytes = actions.map(bytesOf);
  // The bundle's JSON is its frame's with the actions' between the brackets, a comma apart.
  const commas = Math.max(0, actions.length - 1);
  const before = bytesOf({ ...bundle, actions: [] }) + commas + actionBytes.reduce((sum, size) => sum + size, 0);
  if (before <= maxBytes) return bundle;
  const frame = bytesOf({ ...bundle, actions: [], truncated: { maxBytes, bytes: before } }) + commas;
  const total = () => frame + actionBytes.reduce((sum, size) => sum + size, 0);
  const cuts = actions.map((): Map<string, ObservationCut> => new Map());
  const findings = actions.map((action, index) => options.findings?.[index] ?? findingsOfAction(action, bundle.issue.attributes));
  const target = JSON.stringify(judgeBundle(bundle, findings));
  // What each action's evidence names (a metric's series): kept whatever is thinned.
  const named = findings.map(namedSeries);
  const refused = actions.map(() => new Set<string>());
  let verifications = 0;

  const tryMove = (index: number, move: Move, verify: boolean, every?: number): boolean => {
    const action = actions[index];
    const made = cuts[index];
    if (action === undefined || made === undefined) return false;
    const cut = applyMove(action, move, every ?? factorFor(action, move, actionBytes[index] ?? 0, total() - maxBytes), named[index] ?? []);
    if (cut === undefined) return false;
    let cutFindings: Finding[] | undefined;
    if (verify) {
      verifications += 1;
      cutFindings = findingsOfAction(cut.action, bundle.issue.attributes);
      const found = cutFindings;
      if (
        JSON.stringify(
          judgeBundle(
            bundle,
            findings.map((items, at) => (at === index ? found : items)),
          ),
        ) !== target
      )
        return false;
    }
    actions[index] = cut.action;
    if (cutFindings !== undefined) findings[index] = cutFindings;
    made.set(cutKey(cut.record), mergeCut(made.get(cutKey(cut.record)), cut.record));
    actionBytes[index] = bytesOf({ ...cut.action, truncated: [...(cut.action.truncated ?? []), ...made.values()] });
    return true;
  };

  // Cuts that keep the verdict, the largest observation first; a cut refused once is not tried again.
  while (total() > maxBytes && verifications < MAX_VERIFIED_CUTS) {
    let moved = false;
    for (const index of largestFirst(actionBytes)) {
      for (const move of movesOf(actions[index])) {
        const key = moveKey(move);
        if (refused[index]?.has(key) === true) continue;
        // A bold thinning refused, a gentle one (by 2) may still keep the verdict.
        if (tryMove(index, move, true) || (move.kind === "thin" && verifications < MAX_VERIFIED_CUTS && tryMove(index, move, true, 2))) {
          moved = true;
          break;
        }
        refused[index]?.add(key);
      }
      if (moved || verifications >= MAX_VERIFIED_CUTS) break;
    }
    if (!moved) break;
  }
  // Still too large: cut whatever it changes, then leave out whole observations, the largest first.
  for (const index of largestFirst(actionBytes)) {
    if (total() <= maxBytes) break;
    for (const move of movesOf(actions[index])) {
      while (total() > maxBytes && tryMove(index, move, false));
    }
    const action = actions[index];
    if (total() > maxBytes && action !== undefined) {
      const size = bytesOf(action.observation);
      const reason = `left out of the evidence bundle: its ${formatBytes(size)} did not fit the bundle's cap of ${formatBytes(maxBytes)}`;
      actions[index] = { ...action, observation: { kind: "failed", reason } };
      cuts[index]?.set("left-out", { cut: "left-out", bytes: size });
      actionBytes[index] = bytesOf({ ...actions[index], truncated: [...(action.truncated ?? []), ...(cuts[index]?.values() ?? [])] });
    }
  }
  return {
    ...bundle,
    actions: actions.map((action, index) => {
      const made = [...(cuts[index]?.values() ?? [])];
      return made.length === 0 ? action : { ...action, truncated: [...(action.truncated ?? []), ...made] };
    }),
    truncated: { maxBytes, bytes: before },
  };
}

function movesOf(action: BundleAction | undefined): readonly Move[] {
  if (action === undefined) return [];
  return MOVES[action.observation.kind] ?? TEXT_MOVES;
}

function moveKey(move: Move): string {
  return move.kind === "thin" ? `thin ${move.path}` : `shorten ${move.maxChars}`;
}

function cutKey(cut: ObservationCut): string {
  if (cut.cut === "thinned" && "path" in cut) return `thinned ${String(cut.path)}`;
  if (cut.cut === "shortened" && "maxChars" in cut) return `shortened ${String(cut.maxChars)}`;
  return cut.cut;
}

/** Two cuts of the same lists (or texts) as one: thinned twice by 2 is thinned by 4, of the first count. */
function mergeCut(earlier: ObservationCut | undefined, later: ObservationCut): ObservationCut {
  if (earlier === undefined) return later;
  if (earlier.cut === "thinned" && later.cut === "thinned" && "every" in earlier && "every" in later) {
    return { ...later, every: Number(earlier.every) * Number(later.every), of: Number(earlier.of) };
  }
  if (earlier.cut === "shortened" && later.cut === "shortened" && "texts" in earlier && "texts" in later) {
    return { ...later, texts: Number(earlier.texts) + Number(later.texts) };
  }
  return later;
}

/** The labels of the metric series an action's evidence names: the series a thinning keeps. */
function namedSeries(findings: readonly Finding[]): Labels[] {
  return findings.flatMap(({ evidence }) => (evidence.kind === "metric" && evidence.aggregated !== true ? [evidence.labels] : []));
}

/** Whether a list's element is a series the evidence names (its labels hold every label named). */
function isNamed(path: string, element: unknown, named: readonly Labels[]): boolean {
  if (element === null || typeof element !== "object") return false;
  const has = (labels: Labels): boolean => {
    const entries = Object.entries(labels);
    if (path === "data.result" || path === "limit.result") {
      const metric = (element as { metric?: Record<string, string> }).metric ?? {};
      // A limit's series may carry fewer labels than the series it limits: none of them may differ.
      return path === "data.result"
        ? entries.every(([name, value]) => metric[name] === value)
        : entries.every(([name, value]) => metric[name] === undefined || metric[name] === value);
    }
    if (path === "series") {
      const tags = (element as { tag_set?: string[] }).tag_set ?? [];
      return entries.every(([name, value]) => tags.includes(value === "" ? name : `${name}:${value}`));
    }
    return false;
  };
  return named.some(has);
}

/**
 * Thin by as much as would make up `excess` alone, were the lists all of the action's `size` (they are
 * most of it: a cut short of the mark is followed by another), at least by 2; texts have no factor.
 */
function factorFor(action: BundleAction, move: Move, size: number, excess: number): number {
  if (move.kind === "shorten") return 1;
  const lists = listsAt(action.observation, move.path.split("."));
  const longest = Math.max(0, ...lists.map((list) => list.length));
  const wanted = size - excess * 1.02 <= 0 ? longest : Math.ceil(size / (size - excess * 1.02));
  return Math.max(2, Math.min(longest, wanted));
}

/**
 * The action with one move made, and the cut it made; undefined when the move changes nothing. Only the
 * objects on the way to what is cut are copied: the rest is shared with the action as it was.
 */
function applyMove(action: BundleAction, move: Move, every: number, named: readonly Labels[]): { action: BundleAction; record: ObservationCut } | undefined {
  if (move.kind === "shorten") {
    let texts = 0;
    const observation = shortenTexts(action.observation, move.maxChars, () => (texts += 1)) as BundleAction["observation"];
    return texts === 0 ? undefined : { action: { ...action, observation }, record: { cut: "shortened", maxChars: move.maxChars, texts } };
  }
  let of = 0;
  let kept = 0;
  const observation = mapListsAt(action.observation, move.path.split("."), (list) => {
    const thinned =
      list.length < 2 ? list : list.filter((element, position) => (list.length - 1 - position) % every === 0 || isNamed(move.path, element, named));
    of += list.length;
    kept += thinned.length;
    return thinned;
  }) as BundleAction["observation"];
  return kept === of ? undefined : { action: { ...action, observation }, record: { cut: "thinned", path: move.path, every, kept, of } };
}

/** The lists at a dotted path, `*` standing for every element of a list (`data.result.*.values`). */
function listsAt(root: unknown, steps: readonly string[]): unknown[][] {
  const [step, ...rest] = steps;
  if (step === undefined) return Array.isArray(root) ? [root] : [];
  if (step === "*") return Array.isArray(root) ? root.flatMap((item) => listsAt(item, rest)) : [];
  if (root === null || typeof root !== "object" || Array.isArray(root) || !Object.hasOwn(root, step)) return [];
  return listsAt((root as Record<string, unknown>)[step], rest);
}

/** `root` with each list at the path replaced by what `map` makes of it, the objects on the way copied. */
function mapListsAt(root: unknown, steps: readonly string[], map: (list: unknown[]) => unknown[]): unknown {
  const [step, ...rest] = steps;
  if (step === undefined) return Array.isArray(root) ? map(root) : root;
  if (step === "*") return Array.isArray(root) ? root.map((item) => mapListsAt(item, rest, map)) : root;
  if (root === null || typeof root !== "object" || Array.isArray(root) || !Object.hasOwn(root, step)) return root;
  const object = root as Record<string, unknown>;
  return { ...object, [step]: mapListsAt(object[step], rest, map) };
}

/** The value with every string longer than `maxChars` cut after them, "…" added (`kind` and object keys kept). */
function shortenTexts(value: unknown, maxChars: number, counted: () => void): unknown {
  if (typeof value === "string") {
    if (value.length <= maxChars + 1) return value;
    counted();
    return `${value.slice(0, maxChars)}…`;
  }
  if (Array.isArray(value)) return value.map((item) => shortenTexts(item, maxChars, counted));
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, key === "kind" ? item : shortenTexts(item, maxChars, counted)]));
}

function largestFirst(sizes: readonly number[]): number[] {
  return sizes
    .map((size, index) => ({ size, index }))
    .sort((a, b) => b.size - a.size || a.index - b.index)
    .map(({ index }) => index);
}

/** The length of a value's JSON in UTF-8 bytes. */
export function bytesOf(value: unknown): number {
  const text = JSON.stringify(value) ?? "";
  let bytes = 0;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (code >= 0xd800 && code <= 0xdbff && index + 1 < text.length) {
      bytes += 4;
      index += 1;
    } else bytes += 3;
  }
  return bytes;
}

function formatBytes(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${(bytes / (1024 * 1024)).toFixed(1)} MiB` : `${Math.ceil(bytes / 1024)} KiB`;
}
