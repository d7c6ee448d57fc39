import { fillTemplate, type Encoder } from "@pes/templates";
import type { TemplateEncoding } from "../connector-definition.js";
import { goLiteralEncoder } from "../prometheus/promql-escape.js";
import { placeholderInLiteralProblem } from "../query-literals.js";

/**
 * The encoder of LogQL templates (for `=~`, `!~`, `|~`, `!~` with `|regex`). LogQL's string literals are
 * Go's, like PromQL's, and its regexes RE2, so PromQL's escaping holds: a value can neither end its
 * literal nor add regex syntax.
 */
export const logqlEncoder: Encoder = goLiteralEncoder("LogQL");

/** LogQL: each value a string literal (label matchers and line filters alike), `|regex` regex-escaped first. */
export const logqlTemplate: TemplateEncoding = {
  target: "logql",
  filters: { names: ["regex"], where: "loki selectors" },
  problem: placeholderInLiteralProblem,
  fill: (template, attributes) => {
    const problem = placeholderInLiteralProblem(template);
    if (problem !== undefined) throw new Error(problem);
    return fillTemplate(template, attributes, logqlEncoder);
  },
};
