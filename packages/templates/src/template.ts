/**
 * Playbook templates: `{{name}}` or `{{name|filter}}` placeholders in otherwise literal text.
 *
 * This module only finds placeholders and splices in what an encoder returns. It never decides how a
 * value is written: each consumer passes the encoder of its own language (a PromQL string literal, a
 * URL component, plain text), which is what keeps an attribute value from changing a query's structure.
 */

const PLACEHOLDER = /\{\{\s*([A-Za-z_][A-Za-z0-9_.-]*)\s*(?:\|\s*([A-Za-z_][A-Za-z0-9_]*)\s*)?\}\}/g;

export interface Placeholder {
  name: string;
  /** The optional `|filter` suffix, e.g. `regex`; its meaning belongs to the encoder. */
  filter?: string;
}

/** Writes one attribute value into the target language. */
export type Encoder = (value: string, placeholder: Placeholder) => string;

/**
 * An attribute value that the template's language cannot hold without changing what the template means
 * (a dot segment in a URL, text that is not valid Unicode). The message names the attribute and says why.
 */
export class UnsafeValueError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UnsafeValueError";
  }
}

/** A template referenced attributes that the issue does not have. */
export class MissingAttributesError extends Error {
  constructor(readonly names: readonly string[]) {
    super(`missing attribute${names.length === 1 ? "" : "s"} ${names.join(", ")}`);
    this.name = "MissingAttributesError";
  }
}

/** The text of a template before its first placeholder (all of it when it has none). */
export function textBeforePlaceholders(template: string): string {
  // `search` ignores the global flag and leaves lastIndex alone.
  const index = template.search(PLACEHOLDER);
  return index === -1 ? template : template.slice(0, index);
}

/** The placeholders of a template, in order of appearance (repeats included). */
export function placeholdersIn(template: string): Placeholder[] {
  return Array.from(template.matchAll(PLACEHOLDER), (match) => toPlaceholder(match));
}

/**
 * Fills every placeholder with `encode(attributes[name])`.
 * @throws MissingAttributesError naming every placeholder without a value.
 * @throws whatever the encoder throws for a value it refuses (the first one), when no attribute is missing.
 */
export function fillTemplate(template: string, attributes: Readonly<Record<string, string>>, encode: Encoder): string {
  const missing = new Set<string>();
  // A missing attribute wins over a value the encoder refuses: the template cannot be filled either way,
  // and "not run, no attribute x" is the outcome a playbook author expects for a missing one.
  let refused: { error: unknown } | undefined;
  const filled = template.replace(PLACEHOLDER, (...match: string[]) => {
    const placeholder = toPlaceholder(match);
    const value = Object.hasOwn(attributes, placeholder.name) ? attributes[placeholder.name] : undefined;
    if (value === undefined) {
      missing.add(placeholder.name);
      return "";
    }
    if (refused !== undefined) return "";
    try {
      return encode(value, placeholder);
    } catch (error) {
      refused = { error };
      return "";
    }
  });
  if (missing.size > 0) throw new MissingAttributesError([...missing]);
  if (refused !== undefined) throw refused.error;
  return filled;
}

/**
 * Fills the string leaves of a JSON-like value (objects, arrays, strings, numbers, booleans, null),
 * leaving keys and non-string leaves as they are.
 */
export function fillTemplates(value: unknown, attributes: Readonly<Record<string, string>>, encode: Encoder): unknown {
  if (typeof value === "string") return fillTemplate(value, attributes, encode);
  if (Array.isArray(value)) return value.map((item) => fillTemplates(item, attributes, encode));
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, fillTemplates(item, attributes, encode)]));
  }
  return value;
}

/** Plain-text encoder: the value as it is (for titles, highlights and other prose). */
export const asText: Encoder = (value) => value;

/**
 * Fills prose (a title, a condition's words) as text: a placeholder the attributes cannot fill stays
 * visible, as written, rather than failing what the prose belongs to.
 */
export function fillTextOrKeep(template: string, attributes: Readonly<Record<string, string>>): string {
  try {
    return fillTemplate(template, attributes, asText);
  } catch (error) {
    if (error instanceof MissingAttributesError) return template;
    throw error;
  }
}

const DOT_SEGMENT = /^\.{1,2}$/;
const PERCENT_BYTE = /%([0-9A-Fa-f]{2})/g;
// In a `u` regex a well-formed surrogate pair is one code point, so only lone halves match.
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

/**
 * URL encoder: the value as one URL component (path segment or query value), `encodeURIComponent`.
 * @throws UnsafeValueError on a value that is a dot segment (`.` or `..`, see isDotSegment):
 *   encoding leaves dots alone, and a URL parser or server resolves the segment, moving the URL to
 *   another path (`/api/{{service}}/status` with `..` would ask for `/status`). Also on a lone UTF-16
 *   surrogate, which no URL can hold (`encodeURIComponent` throws a bare URIError on it).
 */
export const asUrlComponent: Encoder = (value, placeholder) => {
  if (isDotSegment(value)) {
    throw new UnsafeValueError(`attribute ${placeholder.name} is ${JSON.stringify(value)}, a dot segment, which would move the URL to another path`);
  }
  if (LONE_SURROGATE.test(value)) {
    throw new UnsafeValueError(`attribute ${placeholder.name} is not valid Unicode text (it holds a lone surrogate)`);
  }
  return encodeURIComponent(value);
};

/**
 * Whether a value is, or could be read as, the path segment `.` or `..`: as written, once or twice
 * percent-decoded (WHATWG URL parsers treat `%2e` as a dot; a server or proxy may decode again), or in
 * Unicode compatibility form (`．．`, `‥`), which some servers fold to ASCII.
 */
export function isDotSegment(value: string): boolean {
  let current = value;
  for (let round = 0; round < 3; round += 1) {
    if (DOT_SEGMENT.test(current.normalize("NFKC"))) return true;
    const decoded = current.replace(PERCENT_BYTE, (_match, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
    if (decoded === current) return false;
    current = decoded;
  }
  return DOT_SEGMENT.test(current.normalize("NFKC"));
}

function toPlaceholder(match: ArrayLike<string | undefined>): Placeholder {
  const name = match[1] ?? "";
  const filter = match[2];
  return filter === undefined ? { name } : { name, filter };
}
