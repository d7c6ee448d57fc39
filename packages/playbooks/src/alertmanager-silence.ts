import { hasLoneSurrogate, type SilenceMatcher } from "@pes/connectors/schemas";
import { asText, fillTemplate } from "@pes/templates";
import type { MitigationSilence } from "./playbook-definition.js";
import { parseDuration } from "./playbook-duration.js";

/** A silence in Alertmanager's API v2 form: the body of `POST /api/v2/silences`, as it is. */
export interface SilenceBody {
  [key: string]: unknown;
  matchers: SilenceMatcher[];
  startsAt: string;
  endsAt: string;
  createdBy: string;
  comment: string;
}

const CREATED_BY = "playbook-execution-service";

/**
 * The silence a mitigation offers, from `from` (the issue time) for its duration, its matcher values filled with the
 * issue's attributes as they are (exact matchers: a value such as `.*` silences only itself). Undefined
 * when a value is not valid Unicode text.
 * @throws MissingAttributesError when a template names an attribute the issue lacks.
 */
export function silenceAction(silence: MitigationSilence, attributes: Readonly<Record<string, string>>, from: Date, name: string): SilenceBody | undefined {
  const matchers = silence.matchers.map(
    (matcher): SilenceMatcher => ({ name: matcher.name, value: fillTemplate(matcher.value, attributes, asText), isRegex: false, isEqual: true }),
  );
  // UTF-8 cannot hold a lone surrogate, so Alertmanager could not match it.
  if (matchers.some((matcher) => hasLoneSurrogate(matcher.value))) return undefined;
  return {
    matchers,
    startsAt: from.toISOString(),
    endsAt: new Date(from.getTime() + parseDuration(silence.duration)).toISOString(),
    createdBy: silence.createdBy === undefined ? CREATED_BY : fillTemplate(silence.createdBy, attributes, asText),
    comment: silence.comment === undefined ? name : fillTemplate(silence.comment, attributes, asText),
  };
}
