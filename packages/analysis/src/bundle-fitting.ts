import type { BundleAction, EvidenceBundle, ObservationCut } from "@pes/contracts";
import { MAX_TEMPLATE_LINE_CHARS } from "./log-templates.js";
import { findingsOfAction, judgeBundle } from "./replay.js";

/**
 * Texts are cut after these many characters, the longer first: the analysis reads no further into a log
 * line than MAX_TEMPLATE_LINE_CHARS for its pattern, so that cut changes no pattern.
 */
const TEXT_LIMITS = [MAX_TEMPLATE_LINE_CHARS, 200] as const;

/** One way to make an observation smaller: thin the lists at a path, or shorten its long texts. */
type Move = { kind: "thin"; path: string } | { kind: "shorten"; maxChars: number };

const thin = (path: string): Move => ({ kind: "thin", path });
const shorten = (maxChars: number): Move => ({ kind: "shorten", maxChars });
const [LONG, SHORT] = TEXT_LIMITS;

/**
 * The cuts each kind of observation takes, gentlest first: a series' samples before its series, a log
 * line's tail before its lines, the lines before their streams. Lists of which every element is read as
 * a whole (a list's items, alerts) are thinned; tuples (a sample, a point) never. Counts per step are
 * never cut: they are what rates are computed from, and they are small.
 */
const MOVES: Readonly<Record<string, readonly Move[]>> = {
  prometheus: [thin("data.result.*.values"), thin("limit.result.*.values"), thin("data.result"), thin("limit.result"), shorten(LONG), shorten(SHORT)],
  "datadog-metrics": [thin("series.*.pointlist"), thin("series"), shorten(LONG), shorten(SHORT)],
  logs: [shorten(LONG), thin("streams.*.lines"), thin("streams"), shorten(SHORT)],
  "kubernetes-events": [shorten(LONG), thin("items"), shorten(SHORT)],
  "kubernetes-pods": [shorten(LONG), thin("items"), shorten(SHORT)],
  "kubernetes-rollouts": [shorten(LONG), thin("replicaSets"), thin("deployments"), shorten(SHORT)],
  alertmanager: [shorten(LONG), thin("alerts"), thin("silences"), shorten(SHORT)],
};
const TEXT_MOVES: readonly Move[] = [shorten(LONG), shorten(SHORT)];

/**
 * The bundle, cut to at most `maxBytes` of JSON (UTF-8) when it is larger: the largest observation first,
 * each cut (ObservationCut: thinning a list to one element in every few, the last always; shortening
 * long texts) kept only when the bundle still replays to the verdict and mitigations it replayed to
 * whole. When no such cut is left and it is still too large, the cuts are made whatever they change,
 * then the largest observations are left out, until it fits. Each cut action says how in `truncated`,
 * and the bundle carries its size before (`truncated.bytes`). A bundle within the cap is returned as it is.
 *
 * Pure: the same bundle and cap give the same cuts. A replay reads a cut observation like any other.
 */
export function fitBundle(bundle: EvidenceBundle, maxBytes: number): EvidenceBundle {
  const actionBytes = bundle.actions.map(bytesOf);
  const frame = bytesOf({ ...bundle, actions: [], truncated: { maxBytes, bytes: Number.MAX_SAFE_INTEGER } }) + bundle.actions.length;
  const before = bytesOf(bundle);
  if (before <= maxBytes) return bundle;
  const actions = [...bundle.actions];
  const cuts = actions.map((): Map<string, ObservationCut> => new Map());
  const findings = actions.map(findingsOfAction);
  const target = JSON.stringify(judgeBundle(bundle, findings));
  const total = () => frame + actionBytes.reduce((sum, size) => sum + size, 0);
  const refused = actions.map(() => new Set<string>());

  const tryMove = (index: number, move: Move, verify: boolean, gentle: boolean): boolean => {
    const action = actions[index];
    if (action === undefined) return false;
    const cut = applyMove(action, move, gentle ? 2 : factorFor(action, move, total() - maxBytes));
    if (cut === undefined) return false;
    const cutFindings = findingsOfAction(cut.action);
    if (verify && JSON.stringify(judgeBundle(bundle, findings.map((found, at) => (at === index ? cutFindings : found)))) !== target) return false;
    const made = cuts[index];
    if (made === undefined) return false;
    actions[index] = cut.action;
    findings[index] = cutFindings;
    made.set(cutKey(cut.record), mergeCut(made.get(cutKey(cut.record)), cut.record));
    actionBytes[index] = bytesOf({ ...cut.action, truncated: [...(cut.action.truncated ?? []), ...made.values()] });
    return true;
  };

  // Cuts that keep the verdict, the largest observation first; a cut refused once is not tried again.
  while (total() > maxBytes) {
    const order = largestFirst(actionBytes);
    let moved = false;
    for (const index of order) {
      for (const move of movesOf(actions[index])) {
        const key = moveKey(move);
        if (refused[index]?.has(key) === true) continue;
        // A bold thinning refused, a gentle one (by 2) may still keep the verdict.
        if (tryMove(index, move, true, false) || (move.kind === "thin" && tryMove(index, move, true, true))) {
          moved = true;
          break;
        }
        refused[index]?.add(key);
      }
      if (moved) break;
    }
    if (!moved) break;
  }
  // Still too large: cut whatever it changes, then leave out whole observations, the largest first.
  for (const index of largestFirst(actionBytes)) {
    for (const move of movesOf(actions[index])) {
      while (total() > maxBytes && tryMove(index, move, false, false));
    }
    const action = actions[index];
    if (total() > maxBytes && action !== undefined) {
      const size = bytesOf(action.observation);
      const reason = `left out of the evidence bundle: its ${formatBytes(size)} did not fit the bundle's cap of ${formatBytes(maxBytes)}`;
      actions[index] = { ...action, observation: { kind: "failed", reason } };
      cuts[index]?.set("left-out", { cut: "left-out", bytes: size });
      actionBytes[index] = bytesOf({ ...actions[index], truncated: [...(action.truncated ?? []), ...(cuts[index]?.values() ?? [])] });
    }
    if (total() <= maxBytes) break;
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
  return cut.cut === "thinned" && "path" in cut ? `thinned ${String(cut.path)}` : cut.cut === "shortened" && "maxChars" in cut ? `shortened ${String(cut.maxChars)}` : cut.cut;
}

/** Two cuts of the same lists (or texts) as one: thinned twice by 2 is thinned by 4, of the first count. */
function mergeCut(earlier: ObservationCut | undefined, later: ObservationCut): ObservationCut {
  if (earlier === undefined) return later;
  if (earlier.cut === "thinned" && later.cut === "thinned" && "every" in earlier && "every" in later) {
    return { ...later, every: Number(earlier.every) * Number(later.every), of: Number(earlier.of) };
  }
  if (earlier.cut === "shortened" && later.cut === "shortened" && "texts" in earlier && "texts" in later) {
    return { ...later, texts: Math.max(Number(earlier.texts), Number(later.texts)) };
  }
  return later;
}

/** Thin by as much as would make up `excess` alone (at least by 2); texts are cut at their move's length. */
function factorFor(action: BundleAction, move: Move, excess: number): number {
  if (move.kind === "shorten") return 1;
  const lists = listsAt(action.observation, move.path.split("."));
  const size = lists.reduce((sum, list) => sum + bytesOf(list), 0);
  const longest = Math.max(0, ...lists.map((list) => list.length));
  const wanted = size - excess * 1.1 <= 0 ? longest : Math.ceil(size / (size - excess * 1.1));
  return Math.max(2, Math.min(longest, wanted));
}

/** The action with one move made, and the cut it made; undefined when the move changes nothing. */
function applyMove(action: BundleAction, move: Move, every: number): { action: BundleAction; record: ObservationCut } | undefined {
  const observation = structuredClone(action.observation) as Record<string, unknown>;
  if (move.kind === "shorten") {
    let texts = 0;
    const shortened = shortenTexts(observation, move.maxChars, () => (texts += 1));
    if (texts === 0) return undefined;
    return { action: { ...action, observation: shortened as BundleAction["observation"] }, record: { cut: "shortened", maxChars: move.maxChars, texts } };
  }
  const lists = listsAt(observation, move.path.split("."));
  const of = lists.reduce((sum, list) => sum + list.length, 0);
  if (!lists.some((list) => list.length > 1)) return undefined;
  let kept = 0;
  for (const list of lists) {
    const thinned = list.filter((_, position) => (list.length - 1 - position) % every === 0);
    list.splice(0, list.length, ...thinned);
    kept += thinned.length;
  }
  return { action: { ...action, observation: observation as BundleAction["observation"] }, record: { cut: "thinned", path: move.path, every, kept, of } };
}

/** The lists at a dotted path, `*` standing for every element of a list (`data.result.*.values`). */
function listsAt(root: unknown, steps: readonly string[]): unknown[][] {
  const [step, ...rest] = steps;
  if (step === undefined) return Array.isArray(root) ? [root] : [];
  if (step === "*") return Array.isArray(root) ? root.flatMap((item) => listsAt(item, rest)) : [];
  if (root === null || typeof root !== "object" || Array.isArray(root) || !Object.hasOwn(root, step)) return [];
  return listsAt((root as Record<string, unknown>)[step], rest);
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
  return sizes.map((size, index) => ({ size, index })).sort((a, b) => b.size - a.size || a.index - b.index).map(({ index }) => index);
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
