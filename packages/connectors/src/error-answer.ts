import { answerText, type HttpAnswer } from "./http-client.js";

/** At most this much of an error's own words: enough for "parse error at line 1, col 12: …". */
const MAX_DETAIL_CHARS = 300;

/**
 * An error answer in plain words: `Alertmanager answered 400 Bad Request: bad matcher format: …`. The
 * detail is `detail` when the connector read one from its API's error shape, else what the body says
 * (a JSON string, a JSON object's `message` or `error`, or plain text), on one line and truncated; the
 * runner redacts the data source's secrets from it, as from every evidence text.
 */
export function answeredError(target: string, answer: HttpAnswer, detail: string | undefined = errorDetail(answer)): string {
  const status = `${target} answered ${answer.status}${answer.statusText ? ` ${answer.statusText}` : ""}`;
  const words = detail?.replace(/\s+/g, " ").trim();
  return words ? `${status}: ${words.length <= MAX_DETAIL_CHARS ? words : `${words.slice(0, MAX_DETAIL_CHARS - 1)}…`}` : status;
}

/** What an error body says, if it says something readable: HTML pages and unknown shapes say nothing. */
function errorDetail(answer: HttpAnswer): string | undefined {
  const text = answerText(answer.body);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return answer.contentType?.startsWith("text/plain") ? text : undefined;
  }
  if (typeof json === "string") return json;
  if (json === null || typeof json !== "object") return undefined;
  for (const key of ["message", "error"]) {
    const value: unknown = Reflect.get(json, key);
    if (typeof value === "string") return value;
  }
  return undefined;
}
