import { asText, fillTemplate, placeholdersIn } from "@pes/templates";

/**
 * Fills a gadget's `args` (reported back in gadgetsHighlights[].args) with the attributes, as text.
 *
 * A string leaf that needs an attribute the issue does not have is left out (its key, or its array
 * element), rather than reported with a raw `{{placeholder}}`: args say what the gadget actually ran with.
 * Keys and non-string leaves are kept as they are.
 */
export function renderArgs(args: Readonly<Record<string, unknown>>, attributes: Readonly<Record<string, string>>): Record<string, unknown> {
  return renderEntries(Object.entries(args), attributes);
}

const MISSING = Symbol("missing attribute");

function renderEntries(entries: readonly [string, unknown][], attributes: Readonly<Record<string, string>>): Record<string, unknown> {
  // Object.fromEntries defines own properties, so a key such as "__proto__" stays plain data.
  return Object.fromEntries(
    entries.flatMap(([key, value]) => {
      const filled = renderValue(value, attributes);
      return filled === MISSING ? [] : [[key, filled]];
    }),
  );
}

function renderValue(value: unknown, attributes: Readonly<Record<string, string>>): unknown {
  if (typeof value === "string") {
    const complete = placeholdersIn(value).every((placeholder) => Object.hasOwn(attributes, placeholder.name));
    return complete ? fillTemplate(value, attributes, asText) : MISSING;
  }
  if (Array.isArray(value)) {
    return value.map((item: unknown) => renderValue(item, attributes)).filter((item) => item !== MISSING);
  }
  if (value !== null && typeof value === "object") return renderEntries(Object.entries(value), attributes);
  return value;
}
