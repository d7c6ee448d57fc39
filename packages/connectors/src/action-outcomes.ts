import type { MissingAttributesError } from "@pes/templates";
import type { ActionOutcome } from "./connector.js";
import { skippedAnswer, truncate } from "./outcome-text.js";
import type { DataSourceSecrets } from "./data-source-secrets.js";
import { redactSecrets } from "./redaction.js";

/** How a connector writes an action's outcome. */
export interface ActionOutcomes {
  /** A failed outcome: `<title>: <reason>`. */
  failed(reason: string, mostImportantLink?: string): ActionOutcome;
  /** A skipped outcome naming the attributes the issue lacks. */
  skipped(error: MissingAttributesError): ActionOutcome;
  /** An outcome read from the data source's answer (its shortAnswer is the whole sentence). */
  answered(outcome: ActionOutcome): ActionOutcome;
}

/**
 * The one place where a connector's outcomes are made. Every short answer (the connector's own words, an
 * error text the data source sent, a value read from its answer) has the data source's secrets redacted
 * (resolved at start from its configuration, not listed by the connector), then is cut to 300
 * characters: in that order, so that a cut cannot leave half a secret behind. A connector that builds
 * its outcomes here redacts by construction.
 */
export function actionOutcomes(request: { title: string; secrets: DataSourceSecrets }): ActionOutcomes {
  const { title, secrets } = request;
  const shortAnswer = (text: string): string => truncate(redactSecrets(text, secrets.redacted));
  return {
    failed: (reason, mostImportantLink) => ({
      status: "failed",
      shortAnswer: shortAnswer(`${title}: ${reason}`),
      ...(mostImportantLink === undefined ? {} : { mostImportantLink }),
    }),
    skipped: (error) => ({ status: "skipped", shortAnswer: shortAnswer(skippedAnswer(title, error)) }),
    answered: (outcome) => ({ ...outcome, shortAnswer: shortAnswer(outcome.shortAnswer) }),
  };
}
