import { answerText } from "./http-client.js";

/** An error text is cut to this many characters: enough for a parse error with its position. */
const MAX_ERROR_CHARS = 300;

/**
 * What an error answer says, on one line and cut: a JSON body's `error` (a text, or an object's `reason`)
 * or `message`, else the body as text (Loki answers errors in plain text). Empty when it says nothing.
 * The runner redacts the data source's secrets from whatever quotes it.
 */
export function errorAnswerText(body: Buffer): string {
  const text = answerText(body).trim();
  let said = text;
  try {
    const json: unknown = JSON.parse(text);
    if (json !== null && typeof json === "object") {
      const error = "error" in json ? json.error : undefined;
      const message = "message" in json ? json.message : undefined;
      if (typeof error === "string") said = error;
      else if (typeof message === "string") said = message;
    }
  } catch {
    // Plain text: as it is.
  }
  const line = said.replace(/\s+/g, " ").trim();
  return line.length <= MAX_ERROR_CHARS ? line : `${line.slice(0, MAX_ERROR_CHARS - 1)}…`;
}
