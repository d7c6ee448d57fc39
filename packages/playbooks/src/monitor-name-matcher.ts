import { fillTemplate, placeholdersIn } from "@pes/templates";

export interface MonitorNameMatch {
  bookName: string;
  monitorName: string;
  /** Values captured by the monitor name's {{placeholders}}. */
  attributes: Record<string, string>;
}

export interface MonitorNameMatchOptions {
  /** Only consider this playbook's monitor names (the caller already chose the playbook). */
  bookName?: string;
}

/** What one monitor name made of a title (MonitorNameMatcher.explain). */
export interface MonitorNameExplanation {
  bookName: string;
  monitorName: string;
  /** `chosen`: match() answers it; `outranked`: it matches too, but loses to the chosen one. */
  verdict: "chosen" | "outranked" | "no_match";
  /** Why, in words: the first part of the name the title does not match, or what outranked it. */
  reason: string;
  /** What its placeholders captured, when it matches. */
  captured?: Record<string, string>;
}

export interface MonitorNameMatcher {
  /** The most specific playbook whose monitor name matches the title, or undefined. */
  match(title: string, options?: MonitorNameMatchOptions): MonitorNameMatch | undefined;
  /**
   * Every monitor name's verdict on the title, in configuration order, with the same answer as match()
   * (the one `chosen`). For a dry-run: it tries every name and, for each that fails, parts of it.
   */
  explain(title: string, options?: MonitorNameMatchOptions): MonitorNameExplanation[];
}

/** A playbook as the matcher sees it: its name and its monitor names, in configuration order. */
export interface MonitorNamesOfPlaybook {
  name: string;
  monitorNames: readonly string[];
}

interface CompiledMonitorName {
  bookName: string;
  monitorName: string;
  /** Position in configuration order (playbooks, then their monitor names). */
  order: number;
  pattern: RegExp;
  /**
   * The pattern's parts: the first literal, then one per placeholder (its value and the literal after it).
   * `^` and a prefix of them is the pattern of the name's beginning, which explain() uses to say where
   * a title stops matching.
   */
  steps: readonly ExplainStep[];
  /** Named capture group → attribute name, for each placeholder's first occurrence. */
  groups: ReadonlyMap<string, string>;
  /** How specific the name is: literal characters (code points, after whitespace normalisation). */
  literalLength: number;
}

/**
 * Builds the matcher that identifies a playbook from an alert title.
 *
 * A monitor name such as `High CPU on {{host}} in {{env}}` is a pattern: its literal text must equal the
 * title's (case-insensitive, Unicode NFC, runs of whitespace read as one space, both ends trimmed) and each
 * placeholder captures a non-empty value, trimmed, that becomes an attribute. The whole title must match.
 * - Ambiguous titles: each placeholder takes the shortest value after which the next literal text follows
 *   (`High CPU on a in b in c` gives host `a`, env `b in c`).
 * - A placeholder used twice must capture the same text again (compared case-insensitively); the first
 *   occurrence's value is the attribute.
 * - Several matching names: the one with the most literal characters wins; on a tie, the playbook that
 *   comes first in `playbooks`, then its monitor name that comes first.
 *
 * Each name is compiled once to an anchored RegExp in which every placeholder but the last is an atomic
 * lookahead, so matching never backtracks across placeholders: time grows about linearly with the title.
 * @throws Error when a monitor name contains a NUL character (configuration validation rejects it first).
 */
export function createMonitorNameMatcher(playbooks: readonly MonitorNamesOfPlaybook[]): MonitorNameMatcher {
  const compiled: CompiledMonitorName[] = [];
  for (const playbook of playbooks) {
    for (const monitorName of playbook.monitorNames) {
      const entry = compileMonitorName(playbook.name, monitorName, compiled.length);
      if (entry !== undefined) compiled.push(entry);
    }
  }
  // Most specific first; the sort is stable, so ties keep playbook order, then monitor-name order, and the
  // first name that matches is the answer.
  compiled.sort((a, b) => b.literalLength - a.literalLength);
  const inConfigurationOrder = [...compiled].sort((a, b) => a.order - b.order);
  const considered = (entry: CompiledMonitorName, options: MonitorNameMatchOptions) => options.bookName === undefined || entry.bookName === options.bookName;

  return {
    match(title, options = {}) {
      const text = normalizeText(title);
      for (const entry of compiled) {
        if (!considered(entry, options)) continue;
        const attributes = capture(entry, text);
        if (attributes !== undefined) return { bookName: entry.bookName, monitorName: entry.monitorName, attributes };
      }
      return undefined;
    },
    explain(title, options = {}) {
      const text = normalizeText(title);
      let chosen: CompiledMonitorName | undefined;
      const captures = new Map<CompiledMonitorName, Record<string, string>>();
      for (const entry of compiled) {
        if (!considered(entry, options)) continue;
        const attributes = capture(entry, text);
        if (attributes === undefined) continue;
        captures.set(entry, attributes);
        chosen ??= entry;
      }
      return inConfigurationOrder
        .filter((entry) => considered(entry, options))
        .map((entry): MonitorNameExplanation => {
          const { bookName, monitorName } = entry;
          const captured = captures.get(entry);
          if (captured === undefined) return { bookName, monitorName, verdict: "no_match", reason: mismatchReason(entry, text) };
          if (entry === chosen) return { bookName, monitorName, verdict: "chosen", reason: "matches, and no other matching name is more specific", captured };
          return { bookName, monitorName, verdict: "outranked", reason: outrankedReason(entry, chosen), captured };
        });
    },
  };
}

function capture(entry: CompiledMonitorName, text: string): Record<string, string> | undefined {
  const result = entry.pattern.exec(text);
  if (result === null) return undefined;
  return Object.fromEntries(Array.from(entry.groups, ([group, name]) => [name, result.groups?.[group] ?? ""]));
}

function outrankedReason(entry: CompiledMonitorName, chosen: CompiledMonitorName | undefined): string {
  if (chosen === undefined) return "matches";
  const winner = JSON.stringify(chosen.monitorName);
  if (chosen.literalLength > entry.literalLength) {
    return `matches too, but ${winner} is more specific (${chosen.literalLength} literal characters against ${entry.literalLength})`;
  }
  return `matches too, but ${winner} has as many literal characters and comes first in configuration order`;
}

/**
 * Where the title stops matching the monitor name: the first part (`^` and a prefix of its steps) that
 * fails says which literal text is not where the name wants it.
 */
function mismatchReason(entry: CompiledMonitorName, text: string): string {
  let source = "^";
  for (const [index, step] of entry.steps.entries()) {
    const before = source;
    source += step.source;
    if (new RegExp(source, "isu").test(text)) continue;
    const literal = JSON.stringify(step.literal.trim());
    const next = entry.steps[index + 1]?.placeholder;
    // The literal is there, but the text ends with it: the next placeholder has nothing to capture.
    const endsHere = step.literal.trim() !== "" && new RegExp(`${before}${step.withLiteral(step.literal.trimEnd())}$`, "isu").test(text);
    if (next !== undefined && endsHere) return `nothing left for {{${next}}} to capture`;
    if (step.placeholder === undefined) return `the text does not begin with ${literal}`;
    const placeholder = `{{${step.placeholder}}}`;
    if (step.repeats === true) return `${placeholder} does not repeat the value it captured before`;
    if (step.literal.trim() === "") return `nothing left for {{${next ?? step.placeholder}}} to capture`;
    return `no ${literal} after ${placeholder}`;
  }
  const last = entry.steps.at(-1);
  return last === undefined || last.literal.trim() === "" ? "does not match" : `the text goes on after ${JSON.stringify(last.literal.trim())}`;
}

/**
 * The shape of a monitor name for duplicate detection: normalised as the matcher reads it, lower-cased,
 * placeholders without their names (`High CPU on {{host}}` and `high cpu on {{node}}` have the same shape).
 */
export function monitorNameShape(monitorName: string): string {
  const { literals } = splitMonitorName(monitorName);
  return literals.map((literal) => literal.toLowerCase()).join("{{}}");
}

const CONTROL_CHARACTER = /\p{Cc}/u;

/**
 * What makes a monitor name unusable, if anything: blank (it would never match), control characters
 * other than whitespace, or a `|filter` (a monitor name captures text, it does not write it).
 */
export function monitorNameProblem(monitorName: string): string | undefined {
  if (normalizeText(monitorName) === "") return "a monitor name must not be blank";
  if (CONTROL_CHARACTER.test(monitorName.replace(/\s/gu, " "))) return "a monitor name must not contain control characters";
  if (placeholdersIn(monitorName).some((placeholder) => placeholder.filter !== undefined)) {
    return "a monitor name placeholder takes no |filter: it captures text from the title";
  }
  return undefined;
}

/** Names of the placeholders of a monitor name, first occurrences, in order. */
export function monitorNamePlaceholders(monitorName: string): string[] {
  return [...new Set(placeholdersIn(monitorName).map((placeholder) => placeholder.name))];
}

/** Whitespace and Unicode normalisation applied to monitor names and titles alike. */
export function normalizeText(text: string): string {
  return text.normalize("NFC").replace(/\s+/gu, " ").trim();
}

const SENTINEL = "\u0000";

/**
 * Splits a normalised monitor name into literal texts and placeholders (literals.length ===
 * placeholders.length + 1). The templates package's own parser finds the placeholders, so that monitor
 * names and templates agree on what a placeholder is.
 */
function splitMonitorName(monitorName: string): { literals: string[]; placeholders: string[] } {
  if (monitorName.includes(SENTINEL)) {
    throw new Error(`monitor name ${JSON.stringify(monitorName)} contains a NUL character`);
  }
  const text = normalizeText(monitorName);
  const placeholders = placeholdersIn(text).map((placeholder) => placeholder.name);
  const names = Object.fromEntries(placeholders.map((name) => [name, ""]));
  const literals = fillTemplate(text, names, () => SENTINEL).split(SENTINEL);
  return { literals, placeholders };
}

/** One part of a compiled monitor name: a placeholder (but for the first) and the literal text after it. */
interface ExplainStep {
  source: string;
  /** The step's source with another literal text after the placeholder. */
  withLiteral(literal: string): string;
  placeholder?: string;
  /** The placeholder was used before in the name: it must capture the same text again. */
  repeats?: boolean;
  literal: string;
}

function compileMonitorName(bookName: string, monitorName: string, order: number): CompiledMonitorName | undefined {
  const { literals, placeholders } = splitMonitorName(monitorName);
  if (placeholders.length === 0 && literals.join("") === "") return undefined;

  const groups = new Map<string, string>();
  const groupOf = new Map<string, string>();
  let counter = 0;
  const first = literals[0] ?? "";
  const steps: ExplainStep[] = [{ source: escapeRegExp(first), withLiteral: escapeRegExp, literal: first }];
  placeholders.forEach((name, index) => {
    const text = literals[index + 1] ?? "";
    const isLast = index === placeholders.length - 1;
    const previous = groupOf.get(name);
    if (previous !== undefined) {
      // Same text again, at a fixed position: a backreference does not search.
      const withLiteral = (literal: string) => ` ?\\k<${previous}> ?${escapeRegExp(literal)}`;
      steps.push({ source: withLiteral(text), withLiteral, placeholder: name, repeats: true, literal: text });
      return;
    }
    const value = `v${counter++}`;
    groupOf.set(name, value);
    groups.set(value, name);
    // The value is trimmed by construction: it starts and ends with a non-space (an optional single space
    // on either side belongs to neither the value nor the literal). `??` makes the value as short as possible.
    const capture = ` ?(?<${value}>\\S(?:.*?\\S)??) ?`;
    if (isLast) {
      const withLiteral = (literal: string) => `${capture}${escapeRegExp(literal)}`;
      steps.push({ source: withLiteral(text), withLiteral, placeholder: name, literal: text });
    } else {
      // (?=(…))\k<…> is an atomic group: once the shortest value followed by the next literal is found,
      // no later failure retries other splits. That keeps matching about linear, and loses no match (except
      // with a repeated placeholder): the next placeholder can always absorb text a longer value would take.
      const whole = `w${counter++}`;
      const withLiteral = (literal: string) => `(?=(?<${whole}>${capture}${escapeRegExp(literal)}))\\k<${whole}>`;
      steps.push({ source: withLiteral(text), withLiteral, placeholder: name, literal: text });
    }
  });

  return {
    bookName,
    monitorName,
    order,
    pattern: new RegExp(`^${steps.map((step) => step.source).join("")}$`, "isu"),
    steps,
    groups,
    literalLength: literals.reduce((sum, literal) => sum + [...literal].length, 0),
  };
}

/** Escapes the RegExp syntax characters (valid with the `u` flag, which forbids other identity escapes). */
function escapeRegExp(text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|/]/gu, "\\$&");
}
