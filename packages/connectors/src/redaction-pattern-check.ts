/** The longest custom pattern an organization may set, in characters. */
export const MAX_PATTERN_LENGTH = 512;

/**
 * Why an organization's own pattern cannot join the redaction boundary's combined pattern, or undefined when
 * it can. JavaScript's engine backtracks, so a pattern is refused where it could take exponential time on
 * some text: a backreference, a lookaround, a quantifier on a group that holds a quantifier or an
 * alternation (`(a+)+`, `(a|ab)*`). It must compile, must not match an empty text, and names no group.
 */
export function customPatternProblem(source: string): string | undefined {
  if (source.length === 0) return "a pattern must not be empty";
  if (source.length > MAX_PATTERN_LENGTH) return `a pattern may have at most ${MAX_PATTERN_LENGTH} characters`;
  let compiled: RegExp;
  try {
    compiled = new RegExp(source);
  } catch (error) {
    return `not a valid regular expression: ${error instanceof Error ? error.message : String(error)}`;
  }
  if (compiled.test("")) return "a pattern must not match an empty text";
  return structureProblem(source);
}

interface OpenGroup {
  risky: boolean;
}

/** One pass over the pattern's tokens: escapes, classes, groups and what follows each group's end. */
function structureProblem(source: string): string | undefined {
  const groups: OpenGroup[] = [{ risky: false }];
  let closedRisky = false;
  let i = 0;
  while (i < source.length) {
    const char = source[i];
    const afterGroup = closedRisky;
    closedRisky = false;
    if (char === "\\") {
      const next = source[i + 1] ?? "";
      if (/[1-9]/.test(next) || next === "k") return "a backreference (\\1, \\k<name>) can take exponential time";
      i += 2;
      continue;
    }
    if (char === "[") {
      i = classEnd(source, i) + 1;
      continue;
    }
    if (char === "(") {
      if (source.startsWith("(?=", i) || source.startsWith("(?!", i) || source.startsWith("(?<=", i) || source.startsWith("(?<!", i)) {
        return "a lookahead or lookbehind is not allowed";
      }
      if (source.startsWith("(?<", i)) return "a named group is not allowed";
      groups.push({ risky: false });
      i += source.startsWith("(?:", i) ? 3 : 1;
      continue;
    }
    if (char === ")") {
      const closed = groups.pop();
      if (closed === undefined || groups.length === 0) return "unbalanced parentheses";
      closedRisky = closed.risky;
      // What a group holds is inside the group around it too.
      if (closed.risky) groups[groups.length - 1] = { risky: true };
      i += 1;
      continue;
    }
    const current = groups[groups.length - 1] ?? { risky: false };
    if (char === "|") {
      current.risky = true;
      i += 1;
      continue;
    }
    if (char === "*" || char === "+" || char === "?" || (char === "{" && /^\{\d+(,\d*)?\}/.test(source.slice(i)))) {
      if (afterGroup) return "a quantifier on a group that holds a quantifier or an alternation can take exponential time";
      current.risky = true;
      i = char === "{" ? source.indexOf("}", i) + 1 : i + 1;
      // A lazy or possessive-looking suffix belongs to this quantifier.
      if (source[i] === "?") i += 1;
      continue;
    }
    i += 1;
  }
  return undefined;
}

/** The index of the `]` that ends the class opened at `start`. */
function classEnd(source: string, start: number): number {
  let i = start + 1;
  if (source[i] === "^") i += 1;
  if (source[i] === "]") i += 1;
  while (i < source.length && source[i] !== "]") i += source[i] === "\\" ? 2 : 1;
  return i;
}
