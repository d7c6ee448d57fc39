import { UnsafeValueError, type Encoder } from "@pes/templates";

/**
 * Datadog's tag character set: letters and digits (Unicode), `_`, `-`, `:`, `.`, `/`. Datadog turns
 * anything else into `_` when it stores a tag, so no stored tag value holds it, and in a query it could
 * end the filter (`,` `}` a space `*` `!` `(`…). A leading `-` is refused too: it is how a filter excludes.
 */
const TAG_VALUE = /^[\p{L}\p{N}_:./][\p{L}\p{N}_\-:./]*$/u;
/** Datadog keeps tags up to 200 characters. */
const MAX_TAG_LENGTH = 200;

/**
 * A tag value in a metric query's filter (`{service:{{service}}}`), written as it is: the tag character
 * set holds nothing the filter syntax reads (no space, comma, brace, parenthesis, `!`, `*` or quote), so
 * a value in it is one tag value. A value outside it is refused, never rewritten.
 * @throws UnsafeValueError naming the attribute and what a tag cannot hold.
 */
export const datadogTagEncoder: Encoder = (value, { name }) => {
  if (value === "") throw new UnsafeValueError(`attribute ${name} is empty, which no Datadog tag value is`);
  if (value.length > MAX_TAG_LENGTH) throw new UnsafeValueError(`attribute ${name} is longer than a Datadog tag (${MAX_TAG_LENGTH} characters)`);
  if (!TAG_VALUE.test(value)) {
    throw new UnsafeValueError(`attribute ${name} holds characters a Datadog tag cannot (letters, digits, _ - : . / only, not starting with -)`);
  }
  return value;
};

// What a quoted sequence cannot carry: control characters and line or paragraph separators (a query is one
// line), and lone UTF-16 surrogates (no UTF-8 text holds one; JSON would send `\uD800` as it is).
const UNQUOTABLE = /[\p{Cc}\p{Zl}\p{Zp}]|[\uD800-\uDFFF]/u;
// Inside a sequence: the backslash and the double quote, and the curly quotes that Datadog's search syntax
// lists with them among its special characters (some editors turn `"` into them).
const ESCAPED_IN_SEQUENCE = /[\\"\u201C\u201D]/g;

/**
 * A value in a log search query (`service:{{service}}`, `@http.url:{{url}}`, or free text), written as
 * one double-quoted sequence, Datadog's exact-match term: inside it, wildcards (`*`, `?`), operators
 * (`OR`, `AND`, `-`, `!`), parentheses, braces, brackets, `:` and spaces are plain text, and `\` and `"`
 * are backslash-escaped, so that the value can neither end the sequence nor add a term. An empty value
 * (`service:""` is no exact match the syntax documents) and a value with a control character, a line
 * separator or a lone surrogate (no documented escape) are refused, never rewritten.
 * @throws UnsafeValueError naming the attribute and why.
 */
export const datadogSearchEncoder: Encoder = (value, { name }) => {
  if (value === "") throw new UnsafeValueError(`attribute ${name} is empty, which a Datadog log search cannot match exactly`);
  if (UNQUOTABLE.test(value)) {
    throw new UnsafeValueError(`attribute ${name} holds a control character, a line break or a lone surrogate, which a Datadog log search cannot quote`);
  }
  return `"${value.replace(ESCAPED_IN_SEQUENCE, "\\$&")}"`;
};
