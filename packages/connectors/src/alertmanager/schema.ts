import { fillTemplate, placeholdersIn, type Encoder } from "@pes/templates";
import { z } from "zod";
import { connectionFields } from "../connection-options.js";
import type { TemplateEncoding } from "../connector-definition.js";
import { BasicAuth, BearerAuth } from "../http-auth.js";
import { hasLoneSurrogate, quoteRegexMeta } from "../regex-escape.js";

/** An Alertmanager (API v2). */
export const AlertmanagerDataSource = z.strictObject({
  type: z.literal("alertmanager"),
  url: z.url({ protocol: /^https?$/ }),
  ...connectionFields,
  /** Where people open its UI, when not at `url` (Alertmanager's own --web.external-url): links go there. */
  externalUrl: z.url({ protocol: /^https?$/ }).optional(),
  auth: z.union([BearerAuth, BasicAuth]).optional(),
});
export type AlertmanagerDataSource = z.infer<typeof AlertmanagerDataSource>;

/** A label name as Alertmanager's matchers take it (Prometheus' label-name syntax). */
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/**
 * One label matcher, as Alertmanager's API writes them. `value` is a template: `{{x}}` is the
 * attribute's value as it is (the connector quotes it as a matcher string); in a regex matcher every
 * placeholder must be `{{x|regex}}`, which escapes the value's regex metacharacters, so an attribute
 * value such as `.*` matches only itself.
 */
export const AlertmanagerMatcher = z
  .strictObject({
    name: z.string().regex(LABEL_NAME, "must be a label name (letters, digits and _, not starting with a digit)"),
    value: z.string(),
    isRegex: z.boolean().default(false),
    isEqual: z.boolean().default(true),
  })
  .superRefine((matcher, context) => {
    for (const placeholder of placeholdersIn(matcher.value)) {
      if (matcher.isRegex && placeholder.filter !== "regex") {
        context.addIssue({
          code: "custom",
          path: ["value"],
          message: `in a regex matcher write {{${placeholder.name}|regex}}: a value is matched literally, never as a regular expression`,
        });
      } else if (!matcher.isRegex && placeholder.filter !== undefined) {
        context.addIssue({
          code: "custom",
          path: ["value"],
          message: `{{${placeholder.name}|${placeholder.filter}}}: filters apply only in regex matchers (isRegex: true)`,
        });
      }
    }
  });
export type AlertmanagerMatcher = z.infer<typeof AlertmanagerMatcher>;

/**
 * One action on an Alertmanager: the alerts matching every matcher that were firing in the window, and
 * with `silences`, the silences with exactly these matchers that were active in it.
 */
export const AlertmanagerAction = z.strictObject({
  matchers: z.array(AlertmanagerMatcher).default([]),
  /** Also report the silences with these matchers (Alertmanager's own silence filter) active in the window. */
  silences: z.boolean().default(false),
  /** Also count alerts that a silence or an inhibition rule suppresses (Alertmanager's UI hides them too). */
  includeSilenced: z.boolean().default(false),
  includeInhibited: z.boolean().default(false),
});
export type AlertmanagerAction = z.infer<typeof AlertmanagerAction>;

const matcherValueEncoder: Encoder = (value, placeholder) => {
  if (hasLoneSurrogate(value)) throw new Error(`attribute ${placeholder.name} is not valid Unicode text (it holds a lone surrogate)`);
  return placeholder.filter === "regex" ? quoteRegexMeta(value) : value;
};

/**
 * Matcher values: the attribute's value as it is (written into a quoted matcher string only when the
 * request is built, by alertmanager-matchers.ts), or regex-escaped with `|regex`.
 */
export const alertmanagerMatcherTemplate: TemplateEncoding = {
  target: "alertmanager matcher",
  filters: { names: ["regex"], where: "alertmanager regex matchers" },
  fill: (template, attributes) => fillTemplate(template, attributes, matcherValueEncoder),
};
