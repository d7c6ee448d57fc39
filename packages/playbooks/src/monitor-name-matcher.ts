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

export interface MonitorNameMatcher {
  /** The most specific playbook whose monitor name matches the title, or undefined. */
  match(title: string, options?: MonitorNameMatchOptions): MonitorNameMatch | undefined;
}

/** A playbook as the matcher sees it: its name and its monitor names, in configuration order. */
export interface MonitorNamesOfPlaybook {
  name: string;
  monitorNames: readonly string[];
}

interface CompiledMonitorName {
  bookName: string;
  monitorName: string;
  pattern: RegExp;
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
      const entry = compileMonitorName(playbook.name, monitorName);
      if (entry !== undefined) compiled.push(entry);
    }
  }
  // Most specific first; the sort is stable, so ties keep playbook order, then monitor-name order, and the
  // first name that matches is the answer.
  compiled.sort((a, b) => b.literalLength - a.literalLength);

  return {
    match(title, options = {}) {
      const text = normalizeText(title);
      for (const entry of compiled) {
        if (options.bookName !== undefined && entry.bookName !== options.bookName) continue;
        const result = entry.pattern.exec(text);
        if (result === null) continue;
        const attributes = Object.fromEntries(
          Array.from(entry.groups, ([group, name]) => [name, result.groups?.[group] ?? ""]),
        );
        return { bookName: entry.bookName, monitorName: entry.monitorName, attributes };
      }
      return undefined;
    },
  };
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

function compileMonitorName(bookName: string, monitorName: string): CompiledMonitorName | undefined {
  const { literals, placeholders } = splitMonitorName(monitorName);
  if (placeholders.length === 0 && literals.join("") === "") return undefined;

  const groups = new Map<string, string>();
  const groupOf = new Map<string, string>();
  let counter = 0;
  let source = `^${escapeRegExp(literals[0] ?? "")}`;
  placeholders.forEach((name, index) => {
    const literal = escapeRegExp(literals[index + 1] ?? "");
    const isLast = index === placeholders.length - 1;
    const previous = groupOf.get(name);
    if (previous !== undefined) {
      // Same text again, at a fixed position: a backreference does not search.
      source += ` ?\\k<${previous}> ?${literal}`;
      return;
    }
    const value = `v${counter++}`;
    groupOf.set(name, value);
    groups.set(value, name);
    // The value is trimmed by construction: it starts and ends with a non-space (an optional single space
    // on either side belongs to neither the value nor the literal). `??` makes the value as short as possible.
    const capture = ` ?(?<${value}>\\S(?:.*?\\S)??) ?`;
    if (isLast) {
      source += `${capture}${literal}`;
    } else {
      // (?=(…))\k<…> is an atomic group: once the shortest value followed by the next literal is found,
      // no later failure retries other splits. That keeps matching about linear, and loses no match (except
      // with a repeated placeholder): the next placeholder can always absorb text a longer value would take.
      const whole = `w${counter++}`;
      source += `(?=(?<${whole}>${capture}${literal}))\\k<${whole}>`;
    }
  });
  source += "$";

  return {
    bookName,
    monitorName,
    pattern: new RegExp(source, "isu"),
    groups,
    literalLength: literals.reduce((sum, literal) => sum + [...literal].length, 0),
  };
}

/** Escapes the RegExp syntax characters (valid with the `u` flag, which forbids other identity escapes). */
function escapeRegExp(text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|/]/gu, "\\$&");
}
