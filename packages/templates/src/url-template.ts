import { asUrlComponent, fillTemplate, textBeforePlaceholders, UnsafeValueError } from "./template.js";

/**
 * Fills a URL template, each value as one URL component (asUrlComponent), and checks that the values
 * left the URL where the template's literal text put it:
 *
 * - the same origin (scheme, host, port) as the text before the first placeholder;
 * - a path that starts with that text's path, or is exactly that path when the placeholder comes after
 *   its `?` or `#` (a value fills a query parameter or the fragment, and cannot touch the path);
 * - with `base` (a data source's URL, put before the template as literal text, never filled), a path at
 *   or under the base's path.
 *
 * The encoder already refuses the values that could move a URL (dot segments); the check is the second
 * line, on the URL as a WHATWG parser (undici, browsers) reads it. A template without placeholders and
 * without a base is returned as it is: no value can change it.
 * @returns the filled text, as written (it parses to the URL that was checked).
 * @throws MissingAttributesError naming every placeholder without a value.
 * @throws UnsafeValueError when a value was refused or the filled URL left its fixed part.
 */
export function fillUrlTemplate(template: string, attributes: Readonly<Record<string, string>>, base = ""): string {
  const filled = `${base}${fillTemplate(template, attributes, asUrlComponent)}`;
  const fixedText = `${base}${textBeforePlaceholders(template)}`;
  if (base === "" && fixedText === template) return filled;

  const fixed = parse(fixedText, "the URL template does not fix its scheme and host before its first placeholder");
  const url = parse(filled, "the filled URL is not a valid URL");
  // Not `origin`: it is "null" for every URL of a non-web scheme, which would make any two equal.
  if (url.protocol !== fixed.protocol || url.host !== fixed.host) {
    throw new UnsafeValueError(`attribute values would send the URL to another host than ${fixed.protocol}//${fixed.host}`);
  }
  if (base !== "") {
    const basePath = parse(base, "the base URL is not a valid URL").pathname.replace(/\/+$/, "");
    if (url.pathname !== basePath && !url.pathname.startsWith(`${basePath}/`)) {
      throw new UnsafeValueError(`the URL would leave the base path ${basePath || "/"}`);
    }
  }
  const inPathOnly = !/[?#]/.test(fixedText);
  if (inPathOnly ? !url.pathname.startsWith(fixed.pathname) : url.pathname !== fixed.pathname) {
    throw new UnsafeValueError(`attribute values would move the URL out of the path ${fixed.pathname}`);
  }
  return filled;
}

function parse(text: string, problem: string): URL {
  try {
    return new URL(text);
  } catch {
    throw new UnsafeValueError(problem);
  }
}
