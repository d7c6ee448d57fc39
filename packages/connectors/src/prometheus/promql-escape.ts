import type { Encoder } from "@pes/templates";
import { hasLoneSurrogate, quoteRegexMeta } from "../regex-escape.js";

/**
 * A PromQL string literal holding exactly `value`: JSON's escaping (`\"`, `\\`, `\n`, `\uXXXX`) is a
 * subset of what PromQL's string literals accept, so the value can never end the literal early.
 * @throws Error on a lone UTF-16 surrogate, which JSON would write as `\uD800` and PromQL rejects.
 */
export function promqlString(value: string): string {
  if (hasLoneSurrogate(value)) {
    throw new Error("attribute value is not valid Unicode text (it holds a lone surrogate)");
  }
  return JSON.stringify(value);
}

/**
 * A PromQL string literal for `=~`/`!~` that matches `value` literally: regex metacharacters are
 * escaped first (RE2 syntax), then the result is written as a string literal.
 */
export function promqlRegexString(value: string): string {
  return promqlString(quoteRegexMeta(value));
}

/**
 * The encoder of a query language whose string literals are Go's and whose regexes are RE2 (PromQL,
 * LogQL): `{{x}}` becomes a string literal, `{{x|regex}}` a regex-escaped string literal. Any other
 * filter is a playbook error, reported rather than guessed at.
 */
export function goLiteralEncoder(language: string): Encoder {
  return (value, placeholder) => {
    switch (placeholder.filter) {
      case undefined:
        return promqlString(value);
      case "regex":
        return promqlRegexString(value);
      default:
        throw new Error(`unknown filter "|${placeholder.filter}" on {{${placeholder.name}}}: ${language} templates know only "|regex"`);
    }
  };
}

/** The encoder of Prometheus query templates. */
export const promqlEncoder: Encoder = goLiteralEncoder("PromQL");
