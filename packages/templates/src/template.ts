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

/** A template referenced attributes that the issue does not have. */
export class MissingAttributesError extends Error {
  constructor(readonly names: readonly string[]) {
    super(`missing attribute${names.length === 1 ? "" : "s"} ${names.join(", ")}`);
    this.name = "MissingAttributesError";
  }
}

/** The placeholders of a template, in order of appearance (repeats included). */
export function placeholdersIn(template: string): Placeholder[] {
  return Array.from(template.matchAll(PLACEHOLDER), (match) => toPlaceholder(match));
}

/**
 * Fills every placeholder with `encode(attributes[name])`.
 * @throws MissingAttributesError naming every placeholder without a value.
 */
export function fillTemplate(template: string, attributes: Readonly<Record<string, string>>, encode: Encoder): string {
  const missing = new Set<string>();
  const filled = template.replace(PLACEHOLDER, (...match: string[]) => {
    const placeholder = toPlaceholder(match);
    const value = Object.hasOwn(attributes, placeholder.name) ? attributes[placeholder.name] : undefined;
    if (value === undefined) {
      missing.add(placeholder.name);
      return "";
    }
    return encode(value, placeholder);
  });
  if (missing.size > 0) throw new MissingAttributesError([...missing]);
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
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [key, fillTemplates(item, attributes, encode)]),
    );
  }
  return value;
}

/** Plain-text encoder: the value as it is (for titles, highlights and other prose). */
export const asText: Encoder = (value) => value;

/** URL encoder: the value as one URL component (path segment or query value). */
export const asUrlComponent: Encoder = (value) => encodeURIComponent(value);

function toPlaceholder(match: ArrayLike<string | undefined>): Placeholder {
  const name = match[1] ?? "";
  const filter = match[2];
  return filter === undefined ? { name } : { name, filter };
}
