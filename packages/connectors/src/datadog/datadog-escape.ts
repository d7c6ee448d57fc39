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
