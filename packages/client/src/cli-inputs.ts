import { errorMessage, PlaybookExecutionInput } from "@pes/contracts";
import type { z } from "zod";

/** A mistake in how the CLI was called (flags, input file): exit code 2, nothing sent. */
export class UsageError extends Error {
  override name = "UsageError";
}

/** The `pes run` flags that make up an input. */
export interface RunFlags {
  book?: string;
  title?: string;
  messageLink?: string;
  time?: string;
  attr?: Record<string, string>;
  details?: string;
  channel?: string;
  live?: boolean;
}

/** Input field → the flag that sets it, to name the flag in an error. */
const flagOf: Record<string, string> = {
  bookName: "--book",
  title: "--title",
  messageLink: "--message-link",
  time: "--time",
  attributes: "--attr",
  details: "--details",
  channelId: "--channel",
  liveRun: "--live",
};

/** Parses one `--attr key=value`, adding it to those before (a repeated key: the last one wins). */
export function collectAttribute(value: string, previous: Record<string, string> = {}): Record<string, string> {
  const at = value.indexOf("=");
  if (at <= 0) throw new UsageError(`--attr takes key=value, got "${value}"`);
  return { ...previous, [value.slice(0, at)]: value.slice(at + 1) };
}

/**
 * `2026-11-21T13:43Z` → `2026-11-21T13:43:00Z`: people write minutes, the API wants ISO 8601 with
 * seconds. Anything else is passed as given, for the contract to accept or refuse.
 */
export function withSeconds(time: string): string {
  return time.replace(/^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2})(Z|[+-]\d{2}:\d{2})$/, "$1:00$2");
}

/** The input `pes run` sends, checked against the contract so that a mistake costs no request. */
export function inputFromFlags(flags: RunFlags): PlaybookExecutionInput {
  const raw: Record<string, unknown> = {
    bookName: flags.book,
    messageLink: flags.messageLink,
    title: flags.title,
    time: flags.time === undefined ? undefined : withSeconds(flags.time),
    attributes: flags.attr,
    details: flags.details,
    channelId: flags.channel,
    liveRun: flags.live,
  };
  const parsed = PlaybookExecutionInput.safeParse(raw);
  if (!parsed.success) throw new UsageError(describeIssues(parsed.error, (path) => flagOf[String(path[0])] ?? path.join(".")));
  return parsed.data;
}

/**
 * The inputs of a JSON Lines file: one PlaybookExecutionInput per line, blank lines skipped. Every bad
 * line is reported (by number) before anything is sent: a batch is not half-run for a typo in line 9000.
 */
export function inputsFromJsonLines(text: string, source: string): PlaybookExecutionInput[] {
  const inputs: PlaybookExecutionInput[] = [];
  const problems: string[] = [];
  text.split("\n").forEach((line, index) => {
    if (line.trim() === "") return;
    const where = `${source}:${index + 1}`;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      problems.push(`${where}: not JSON (${errorMessage(error)})`);
      return;
    }
    const parsed = PlaybookExecutionInput.safeParse(value);
    if (parsed.success) inputs.push(parsed.data);
    else problems.push(`${where}: ${describeIssues(parsed.error, (path) => path.join("."))}`);
  });
  if (problems.length > 0) {
    const shown = problems.slice(0, MAX_PROBLEMS_SHOWN);
    if (problems.length > shown.length) shown.push(`… and ${problems.length - shown.length} more bad lines`);
    throw new UsageError(`nothing sent: ${problems.length} bad line(s)\n${shown.join("\n")}`);
  }
  if (inputs.length === 0) throw new UsageError(`${source} holds no input`);
  return inputs;
}

const MAX_PROBLEMS_SHOWN = 20;

function describeIssues(error: z.ZodError, name: (path: readonly PropertyKey[]) => string): string {
  return error.issues.map((issue) => (issue.path.length === 0 ? issue.message : `${name(issue.path)}: ${issue.message}`)).join("; ");
}
