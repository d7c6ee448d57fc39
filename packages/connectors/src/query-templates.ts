import type { DataSourceBase } from "./connector.js";
import type { TemplateEncoding, TemplateField } from "./connector-definition.js";

/**
 * The query with every template field its connector declares filled, in the order declared: the first
 * field that cannot be filled throws (MissingAttributesError, or why a value cannot be written). Fields
 * are replaced, never edited in place: the query is the playbook's, shared by every run.
 */
export function fillQuery<Q>(query: Q, fields: readonly TemplateField[], attributes: Readonly<Record<string, string>>, dataSource: DataSourceBase): Q {
  let filled = query;
  for (const field of fields) {
    const template = valueAtPath(filled, field.path);
    if (template === undefined) continue;
    const value =
      field.leaves === true ? fillLeaves(template, field.encoding, attributes, dataSource) : fillOne(template, field.encoding, attributes, dataSource);
    filled = withValueAt(filled, field.path, value);
  }
  return filled;
}

function fillOne(template: unknown, encoding: TemplateEncoding, attributes: Readonly<Record<string, string>>, dataSource: DataSourceBase): unknown {
  return typeof template === "string" ? encoding.fill(template, attributes, dataSource) : template;
}

/** Fills the string leaves of a JSON-like value; keys, numbers, booleans and null stay as they are. */
function fillLeaves(value: unknown, encoding: TemplateEncoding, attributes: Readonly<Record<string, string>>, dataSource: DataSourceBase): unknown {
  if (typeof value === "string") return encoding.fill(value, attributes, dataSource);
  if (Array.isArray(value)) return value.map((item: unknown) => fillLeaves(item, encoding, attributes, dataSource));
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, fillLeaves(item, encoding, attributes, dataSource)]));
  }
  return value;
}

/** The value at a path of object keys (own properties only); undefined when a step is missing. */
export function valueAtPath(root: unknown, path: readonly string[]): unknown {
  let current = root;
  for (const key of path) {
    if (current === null || typeof current !== "object" || !Object.hasOwn(current, key)) return undefined;
    current = Reflect.get(current, key);
  }
  return current;
}

/** A copy of `root` with the value at `path` replaced (copies along the path only). */
function withValueAt<T>(root: T, path: readonly string[], value: unknown): T {
  const [key, ...rest] = path;
  if (key === undefined) return root;
  if (root === null || typeof root !== "object") return root;
  return { ...root, [key]: rest.length === 0 ? value : withValueAt(Reflect.get(root, key), rest, value) };
}
