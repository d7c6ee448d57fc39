import { createHmac, randomBytes } from "node:crypto";
import { quoteRegexMeta } from "./regex-escape.js";
import { BUILT_IN_DETECTORS, BUILT_IN_REDACTION_KINDS, type BuiltInRedactionKind, type RedactionDetector } from "./redaction-detectors.js";

/** An organization's own pattern: its name is its tokens' kind (`«employee-id:…»`). */
export interface CustomRedactionPattern {
  name: string;
  regex: string;
}

/** What an organization redacts: the built-in kinds it keeps on, its own patterns, and label names whose values always go. */
export interface RedactionPolicy {
  detectors: ReadonlySet<BuiltInRedactionKind>;
  patterns: readonly CustomRedactionPattern[];
  labels: readonly string[];
}

/** Every built-in kind on, nothing of the organization's own: the policy of an organization that sets none. */
export const DEFAULT_REDACTION_POLICY: RedactionPolicy = { detectors: new Set(BUILT_IN_REDACTION_KINDS), patterns: [], labels: [] };

/** How many hex digits of a value's HMAC a token shows: 32 bits, so 3000 addresses collide once in about 2000 executions. */
const TOKEN_HEX_DIGITS = 8;
/**
 * A label's value in free text is redacted up to this length: quoted, or unquoted up to a comma or the
 * next `name=` (`customer=Globex Corporation, pod=…` as the analysis writes labels; logfmt's `a=b c=d`).
 */
const MAX_LABEL_VALUE = 256;
/** A number this short is a metric sample, never a card: skipped when only built-ins run. */
const SHORT_NUMBER = /^[-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|NaN|Inf)$/;
const SHORTEST_NUMBER_TO_CHECK = 13;
/** A token, which a second pass leaves as it is. */
const TOKEN = /^«[a-z0-9-]+:[0-9a-f]+»$/;

/** A policy compiled once per organization: one combined pattern, each alternative a named group. */
export interface CompiledRedaction {
  pattern: RegExp | undefined;
  detectors: readonly RedactionDetector[];
  labels: ReadonlySet<string>;
  /** Whether short numbers may be skipped: no pattern of the organization's own could match one. */
  skipShortNumbers: boolean;
}

/**
 * Compiles a policy into one regular expression: every detector one named alternative (`r0`, `r1`…), so
 * that a text is scanned once whatever the number of kinds. The custom patterns were checked when the
 * configuration was loaded (customPatternProblem); label names add their `name=value` and `"name":"value"`
 * forms in free text.
 */
export function compileRedaction(policy: RedactionPolicy): CompiledRedaction {
  const detectors: RedactionDetector[] = BUILT_IN_REDACTION_KINDS.filter((kind) => policy.detectors.has(kind)).map((kind) => BUILT_IN_DETECTORS[kind]);
  for (const { name, regex } of policy.patterns) detectors.push({ kind: name, source: regex });
  if (policy.labels.length > 0) {
    const names = policy.labels.map(quoteRegexMeta).join("|");
    detectors.push({
      kind: "label",
      source: [
        // name="value": the value inside the quotes.
        `(?<=(?<![\\w.-])(?:${names})=")(?!«)[^"\\n]{1,${MAX_LABEL_VALUE}}`,
        // name=value: up to a comma, a space before the next name=, or a quote or bracket.
        `(?<=(?<![\\w.-])(?:${names})=)(?!["«])[^\\s,;&"'}\\]]{1,${MAX_LABEL_VALUE}}(?: (?![^\\s=]*=)[^\\s,;&"'}\\]=]{1,${MAX_LABEL_VALUE}}){0,16}`,
        // "name":"value", as JSON written in a text.
        `(?<="(?:${names})"[ ]?:[ ]?")(?!«)[^"\\n]{1,${MAX_LABEL_VALUE}}`,
      ].join("|"),
    });
  }
  const pattern = detectors.length === 0 ? undefined : new RegExp(detectors.map((detector, index) => `(?<r${index}>${detector.source})`).join("|"), "g");
  return { pattern, detectors, labels: new Set(policy.labels), skipShortNumbers: policy.patterns.length === 0 };
}

/**
 * One execution's redaction: every text in, the same text out with each value found replaced by its token
 * `«kind:hex»`, the hex an HMAC-SHA256 of the value under a salt drawn for this execution alone. The same
 * value reads as the same token throughout the execution (each computed once), different values differ,
 * and nothing outside this closure sees the salt: a token cannot be tied to another execution's.
 */
export interface Redactor {
  /** A text with every value found replaced; `label` is the name of the label or field it is the value of. */
  text(text: string, label?: string): string;
  /**
   * A value with every text in it redacted, keys included (a label's or field's value whole, when its name
   * is one of the policy's labels), and its shape kept: arrays, plain objects, dates, maps and sets are
   * copied where something changed, the same object twice becomes the same copy twice, and a lazy list
   * (an iterable that is not an array) stays lazy, redacted as it is read. Fields named in `keep` are
   * kept as they are, wherever they are (a link the service built from configuration).
   */
  value<T>(value: T, keep?: ReadonlySet<string>): T;
}

export function createRedactor(compiled: CompiledRedaction): Redactor {
  const salt = randomBytes(32);
  const hashes = new Map<string, string>();
  const tokenOf = (kind: string, value: string): string => {
    let hash = hashes.get(value);
    if (hash === undefined) {
      hash = createHmac("sha256", salt).update(value).digest("hex").slice(0, TOKEN_HEX_DIGITS);
      hashes.set(value, hash);
    }
    return `«${kind}:${hash}»`;
  };
  const { pattern, detectors, labels, skipShortNumbers } = compiled;
  const replace = (match: string, ...rest: unknown[]): string => {
    const groups = rest[rest.length - 1] as Record<string, string | undefined>;
    for (let index = 0; index < detectors.length; index += 1) {
      if (groups[`r${index}`] === undefined) continue;
      const detector = detectors[index];
      if (detector === undefined || (detector.accepts !== undefined && !detector.accepts(match))) return match;
      return tokenOf(detector.kind, match);
    }
    return match;
  };
  const text = (value: string, label?: string): string => {
    if (label !== undefined && labels.has(label) && value.length > 0 && !TOKEN.test(value)) return tokenOf("label", value);
    if (pattern === undefined || value.length < 3) return value;
    if (skipShortNumbers && value.length < SHORTEST_NUMBER_TO_CHECK && SHORT_NUMBER.test(value)) return value;
    return value.replace(pattern, replace);
  };
  return { text, value: (value, keep) => redactValue(value, text, keep ?? NOTHING_KEPT) };
}

const NOTHING_KEPT: ReadonlySet<string> = new Set();

type Walk = (item: unknown, label?: string) => unknown;
type Text = (value: string, label?: string) => string;

/** `value` with `text` applied to every string in it, one copy per object (see Redactor.value). */
function redactValue<T>(value: T, text: Text, keep: ReadonlySet<string>): T {
  return walkerOf(text, keep)(value) as T;
}

/**
 * A walk that copies each object once. An item of a lazy list is walked by a walk of its own: what was
 * read is not held past its turn (a Prometheus answer is read one series at a time).
 */
function walkerOf(text: Text, keep: ReadonlySet<string>): Walk {
  const copies = new Map<object, unknown>();
  const walk: Walk = (item, label) => {
    if (typeof item === "string") return text(item, label);
    if (item === null || typeof item !== "object") return item;
    const seen = copies.get(item);
    if (seen !== undefined) return seen;
    const copy = copyOf(item, walk, text, keep);
    // An object left as it was is its own copy: only the changed ones need remembering.
    if (copy !== item) copies.set(item, copy);
    return copy;
  };
  return walk;
}

function copyOf(item: object, walk: Walk, text: Text, keep: ReadonlySet<string>): unknown {
  if (item instanceof Date) return item;
  if (Array.isArray(item)) {
    // Copied from the first element that changed: most arrays (a series' samples) stay as they are.
    let copy: unknown[] | undefined;
    for (let index = 0; index < item.length; index += 1) {
      const element: unknown = item[index];
      const walked = walk(element);
      if (walked !== element && copy === undefined) copy = item.slice(0, index);
      copy?.push(walked);
    }
    return copy ?? item;
  }
  if (item instanceof Map) return new Map([...item].map(([key, entry]) => [walk(key), walk(entry)]));
  if (item instanceof Set) return new Set([...item].map((entry) => walk(entry)));
  if (Symbol.iterator in item) return lazilyRedacted(item as Iterable<unknown>, text, keep);
  let changed = false;
  const copy: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(item)) {
    if (keep.has(key)) {
      copy[key] = field;
      continue;
    }
    const name = walk(key) as string;
    const walked = walk(field, key);
    if (name !== key || walked !== field) changed = true;
    copy[name] = walked;
  }
  return changed ? copy : item;
}

/** A lazy list redacted item by item as it is read; written to JSON as the array it is. */
function lazilyRedacted(source: Iterable<unknown>, text: Text, keep: ReadonlySet<string>): Iterable<unknown> & { toJSON(): unknown[] } {
  return {
    *[Symbol.iterator]() {
      for (const item of source) yield walkerOf(text, keep)(item);
    },
    toJSON() {
      return [...this];
    },
  };
}
