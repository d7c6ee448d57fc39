/**
 * Log lines grouped into templates: the variable parts of a line (times, numbers, ids, addresses…) are
 * masked, then lines of the same shape are merged Drain-style (He et al., "Drain: An Online Log Parsing
 * Approach with Fixed Depth Tree", 2017): lines with as many tokens and the same first token are compared
 * position by position, and a line joins the most similar template when enough positions agree, the
 * positions that differ becoming `<*>`. One pass, a bounded number of comparisons per line.
 */

/** Lines are templated on at most this many characters: a stack dump is one line, not a reason to stall. */
export const MAX_TEMPLATE_LINE_CHARS = 1000;
/** A line joins a template when at least this share of its tokens are equal to the template's. */
const SIMILARITY = 0.6;
/** Templates compared per group (token count and first token); later ones only match exactly. */
const MAX_COMPARED_PER_GROUP = 100;
const WILDCARD = "<*>";
const QUOTED = "<str>";

// Each alternative names what it masks; the first that matches at a position wins, so the order matters:
// a timestamp before its numbers, a UUID before its hex, an IP before its numbers, a duration before an id.
const MASKS: ReadonlyArray<readonly [mask: string, pattern: string]> = [
  // A value the redaction boundary replaced (`«ipv4:3f9a1c0b»`, @pes/connectors' redactor) masks as the
  // value would have: a bundle kept redacted replays to the templates its execution found.
  ["<ip>", String.raw`«ipv[46]:[0-9a-f]+»`],
  ["<email>", String.raw`«email:[0-9a-f]+»`],
  ["<num>", String.raw`«card:[0-9a-f]+»`],
  ["<id>", String.raw`«[a-z0-9-]+:[0-9a-f]+»`],
  ["<time>", String.raw`\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?|\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\b`],
  // Quoted strings are read whole, so that a closing quote is never taken for an opening one (see maskQuoted).
  [QUOTED, String.raw`"(?:[^"\\]|\\.)*"|(?<!\w)'(?:[^'\\]|\\.)*'(?!\w)`],
  ["<email>", String.raw`\b[\w.+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+\b`],
  ["<uuid>", String.raw`\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b`],
  [
    "<ip>",
    String.raw`\b(?:25[0-5]|2[0-4]\d|1?\d?\d)(?:\.(?:25[0-5]|2[0-4]\d|1?\d?\d)){3}\b` +
      String.raw`|(?<![\w:])(?:[0-9a-fA-F]{1,4}:){7}[0-9a-fA-F]{1,4}(?![\w:])` +
      String.raw`|(?<![\w:])(?=[0-9a-fA-F:]*\d)(?:[0-9a-fA-F]{1,4}(?::[0-9a-fA-F]{1,4})*)?::(?:[0-9a-fA-F]{1,4}(?::[0-9a-fA-F]{1,4})*)?(?![\w:])`,
  ],
  ["<hex>", String.raw`\b0[xX][0-9a-fA-F]+\b|\b(?=[0-9a-fA-F]*\d)(?=[0-9a-fA-F]*[a-fA-F])[0-9a-fA-F]{8,}\b`],
  ["<duration>", String.raw`\b(?:\d+(?:\.\d+)?(?:ns|us|µs|ms|min|s|m|h))+(?![\w.])`],
  // A token mixing letters and digits (a pod name, a request id, user42): at least 6 characters, so that
  // short words with a digit (v1, http2, k8s) stay words, their digits masked as numbers.
  ["<id>", String.raw`(?<![\w-])(?=[\w-]*\d)(?=[\w-]*[A-Za-z])[\w-]{6,}(?![\w-])`],
  ["<num>", String.raw`\d+(?:\.\d+)?`],
];
const MASK_PATTERN = new RegExp(MASKS.map(([, pattern]) => `(${pattern})`).join("|"), "g");
const INNER_MASKS = MASKS.filter(([mask]) => mask !== QUOTED);
const INNER_PATTERN = new RegExp(INNER_MASKS.map(([, pattern]) => `(${pattern})`).join("|"), "g");
/** A key (`"k":`, `'k'=`) or a value (`k="v"`, `"k": "v"`) is structure: kept, its parts masked. */
const BEFORE_VALUE = /[=:]\s?$/;
const BEFORE_KEY = /^\s?[:=]/;

/**
 * The line with its variable parts masked: `<time>`, `<str>` (a quoted string in prose), `<email>`,
 * `<uuid>`, `<ip>`, `<hex>`, `<duration>`, `<id>`, `<num>`; cut to MAX_TEMPLATE_LINE_CHARS and its
 * whitespace runs made single spaces. Pure: the same line always masks the same.
 */
export function maskLine(line: string): string {
  const text = line.length > MAX_TEMPLATE_LINE_CHARS ? line.slice(0, MAX_TEMPLATE_LINE_CHARS) : line;
  const masked = text.replace(MASK_PATTERN, (match: string, ...groups: unknown[]) => {
    const mask = maskOf(MASKS, groups);
    if (mask !== QUOTED) return mask;
    const offset = groups[MASKS.length] as number;
    const structural =
      BEFORE_VALUE.test(text.slice(Math.max(0, offset - 2), offset)) || BEFORE_KEY.test(text.slice(offset + match.length, offset + match.length + 2));
    return structural ? match.replace(INNER_PATTERN, (...inner: unknown[]) => maskOf(INNER_MASKS, inner.slice(1))) : QUOTED;
  });
  return masked.replace(/\s+/g, " ").trim();
}

/** The mask of the alternative that matched: `groups` are the replacer's capture groups, one per mask. */
function maskOf(masks: typeof MASKS, groups: readonly unknown[]): string {
  for (let index = 0; index < masks.length; index += 1) {
    if (groups[index] !== undefined) return masks[index]?.[0] ?? WILDCARD;
  }
  return WILDCARD;
}

/** A template found so far: its tokens (`<*>` where its lines differ). */
interface Cluster {
  id: number;
  tokens: string[];
}

/** Groups lines into templates, one line at a time; the same lines in the same order give the same templates. */
export interface TemplateMiner {
  /** The template the line joins (a new one if none is close enough): an id for `template`. */
  add(line: string): number;
  /** The template's text as it is now: its lines' masked tokens, `<*>` where they differ. */
  template(id: number): string;
}

/** A fresh template miner (see the module comment for how lines are merged). */
export function createTemplateMiner(): TemplateMiner {
  const clusters: Cluster[] = [];
  // Group key → the templates compared in it, and an exact index of the templates that are not.
  const groups = new Map<string, { compared: Cluster[]; exact: Map<string, Cluster> }>();
  return {
    add(line) {
      const tokens = maskLine(line).split(" ");
      const first = tokens[0] ?? "";
      const key = `${tokens.length} ${first.includes("<") ? WILDCARD : first}`;
      let group = groups.get(key);
      if (group === undefined) {
        group = { compared: [], exact: new Map() };
        groups.set(key, group);
      }
      const best = mostSimilar(group.compared, tokens);
      if (best !== undefined) {
        best.tokens = best.tokens.map((token, index) => (token === tokens[index] ? token : WILDCARD));
        return best.id;
      }
      const text = tokens.join(" ");
      const known = group.exact.get(text);
      if (known !== undefined) return known.id;
      const cluster: Cluster = { id: clusters.length, tokens };
      clusters.push(cluster);
      if (group.compared.length < MAX_COMPARED_PER_GROUP) group.compared.push(cluster);
      else group.exact.set(text, cluster);
      return cluster.id;
    },
    template: (id) => clusters[id]?.tokens.join(" ") ?? "",
  };
}

/**
 * The template whose tokens agree with `tokens` at the most positions (a `<*>` agrees with nothing, as in
 * Drain), if that is at least SIMILARITY of them; ties go to the older template.
 */
function mostSimilar(candidates: readonly Cluster[], tokens: readonly string[]): Cluster | undefined {
  let best: Cluster | undefined;
  let bestEqual = -1;
  for (const cluster of candidates) {
    let equal = 0;
    for (let index = 0; index < tokens.length; index += 1) {
      if (cluster.tokens[index] === tokens[index]) equal += 1;
    }
    if (equal > bestEqual) {
      best = cluster;
      bestEqual = equal;
    }
  }
  return best !== undefined && bestEqual >= SIMILARITY * tokens.length ? best : undefined;
}
