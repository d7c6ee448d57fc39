import { BUILT_IN_REDACTION_KINDS, customPatternProblem, type RedactionPolicy } from "@pes/connectors/schemas";
import { z } from "zod";

/** A custom pattern's name is its tokens' kind: lower-case letters, digits and `-`. */
const PATTERN_NAME = /^[a-z][a-z0-9-]{0,31}$/;
/** A label or field name, as Prometheus, Loki and JSON answers spell them. */
const LABEL_NAME = /^[A-Za-z_][A-Za-z0-9_.-]{0,127}$/;

/**
 * `redaction` in an organization file: what the redaction boundary takes out of everything data sources
 * answered before it leaves the worker (docs/redaction.md). Every built-in kind is on unless set `false`.
 */
export const RedactionSettings = z.strictObject({
  detectors: z.partialRecord(z.enum(BUILT_IN_REDACTION_KINDS), z.boolean()).default({}),
  patterns: z
    .array(
      z.strictObject({
        name: z.string().regex(PATTERN_NAME, "a pattern's name is lower-case letters, digits and '-' (at most 32), starting with a letter"),
        regex: z.string().superRefine((source, context) => {
          const problem = customPatternProblem(source);
          if (problem !== undefined) context.addIssue({ code: "custom", message: problem });
        }),
      }),
    )
    .max(64)
    .default([]),
  labels: z.array(z.string().regex(LABEL_NAME, "a label name is letters, digits, '_', '.' or '-', starting with a letter or '_'")).max(256).default([]),
});
export type RedactionSettings = z.infer<typeof RedactionSettings>;

/** The policy an organization's settings make: every built-in kind on but those it turns off. */
export function redactionPolicyOf(settings: RedactionSettings | undefined): RedactionPolicy {
  return {
    detectors: new Set(BUILT_IN_REDACTION_KINDS.filter((kind) => settings?.detectors[kind] !== false)),
    patterns: settings?.patterns ?? [],
    labels: settings?.labels ?? [],
  };
}
