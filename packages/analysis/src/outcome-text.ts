/** Short answers are cut to this many characters, so that one answer cannot flood a summary. */
export const MAX_ANSWER_CHARS = 300;

/** Cuts a text to `max` characters with an ellipsis, so one answer cannot flood a summary. */
export function truncate(text: string, max = MAX_ANSWER_CHARS): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
