import type { ServerResponse } from "node:http";
import { sendJson, startTestHttpServer, type SeenRequest, type TestHttpServer } from "./test-http-server.js";

/** One log stream the fake Loki serves: its labels and its lines. */
export interface FakeLokiStream {
  labels: Readonly<Record<string, string>>;
  /** The stream's lines, in any order; `at` a Date or milliseconds since the epoch. */
  entries: ReadonlyArray<{ at: Date | number; line: string }>;
}

export interface FakeLokiOptions {
  streams: readonly FakeLokiStream[];
  /** When set, a request must carry this `X-Scope-OrgID` (else 401 "no org id", as Loki with auth_enabled). */
  tenant?: string;
}

/** A fake Loki: a real HTTP server, the requests it saw, and its close. */
export type FakeLoki = TestHttpServer;

interface Entry {
  at: number;
  line: string;
}

interface Stream {
  labels: Readonly<Record<string, string>>;
  entries: Entry[];
}

/**
 * A Loki on 127.0.0.1 that answers `GET /loki/api/v1/query_range` from in-memory streams, in Loki's wire
 * format (HTTP API docs: `streams` answers with `["<ns>", "<line>"]` values, `matrix` answers with
 * `[<seconds>, "<value>"]`; errors as plain text with their status). It runs the LogQL a connector sends,
 * for real, on its streams:
 *
 * - a log query: a stream selector `{name="v", name!="v", name=~"re", name!~"re"}` (at least one matcher,
 *   an `=~` that matches the empty string does not count as one) followed by any line filters
 *   `|= "text"`, `!= "text"`, `|~ "re"`, `!~ "re"`, with `start`/`end` (end exclusive), `limit` (default
 *   100) and `direction` (`backward`, the default: newest first; or `forward`);
 * - `sum(count_over_time(<log query>[<n>s|m|h]))` with `step`: one series counting, at each step from
 *   `start` to `end`, the lines in (t − range, t]; steps with no line are left out, as Loki does.
 *
 * Strings are Go string literals, `"…"` with escapes or `` `…` `` raw; regexes anchor label matchers
 * (JavaScript's RegExp stands in for RE2). Anything else is answered 400 `parse error at line 1, col N: …`.
 * Times are nanoseconds since the epoch, seconds (with a fraction) or RFC 3339, as Loki accepts them.
 */
export async function startFakeLoki(options: FakeLokiOptions): Promise<FakeLoki> {
  const streams: Stream[] = options.streams.map((stream) => ({
    labels: stream.labels,
    entries: stream.entries.map((entry) => ({ at: typeof entry.at === "number" ? entry.at : entry.at.getTime(), line: entry.line })),
  }));
  return startTestHttpServer((request, response) => {
    const url = new URL(request.url, "http://loki.invalid");
    if (request.method !== "GET" || url.pathname !== "/loki/api/v1/query_range") return sendText(response, 404, "404 page not found");
    if (options.tenant !== undefined && request.headers["x-scope-orgid"] !== options.tenant) return sendText(response, 401, "no org id");
    try {
      sendJson(response, 200, queryRange(streams, url.searchParams));
    } catch (error) {
      if (error instanceof LokiError) return sendText(response, 400, error.message);
      throw error;
    }
  });
}

/** The requests' LogQL queries, for a test that asserts what a connector sent. */
export function lokiQueriesOf(requests: readonly SeenRequest[]): string[] {
  return requests.map((request) => new URL(request.url, "http://loki.invalid").searchParams.get("query") ?? "");
}

class LokiError extends Error {}

function sendText(response: ServerResponse, status: number, text: string): void {
  response.writeHead(status, { "content-type": "text/plain; charset=utf-8", "content-length": Buffer.byteLength(text) });
  response.end(text);
}

function queryRange(streams: readonly Stream[], parameters: URLSearchParams): unknown {
  const query = parameters.get("query");
  if (query === null || query === "") throw new LokiError("query must be specified");
  const start = timeParameter(parameters.get("start"), Date.now() - 3_600_000);
  const end = timeParameter(parameters.get("end"), Date.now());
  const metric = /^\s*sum\s*\(\s*count_over_time\s*\(([\s\S]*)\[\s*(\d+)(s|m|h)\s*\]\s*\)\s*\)\s*$/.exec(query);
  if (metric !== null) {
    const selection = parseLogQuery(metric[1] ?? "", query.indexOf(metric[1] ?? ""));
    const range = Number(metric[2]) * { s: 1000, m: 60_000, h: 3_600_000 }[metric[3] as "s" | "m" | "h"];
    const step = durationParameter(parameters.get("step"));
    const lines = select(streams, selection)
      .flatMap((stream) => stream.entries.map((entry) => entry.at))
      .sort((a, b) => a - b);
    const values: Array<[number, string]> = [];
    for (let t = start; t <= end; t += step) {
      const count = firstAfter(lines, t) - firstAfter(lines, t - range);
      if (count > 0) values.push([t / 1000, String(count)]);
    }
    return { status: "success", data: { resultType: "matrix", result: values.length === 0 ? [] : [{ metric: {}, values }], stats: {} } };
  }
  const selection = parseLogQuery(query, 0);
  const limit = Number(parameters.get("limit") ?? "100");
  const forward = parameters.get("direction") === "forward";
  const picked = select(streams, selection)
    .flatMap((stream) => stream.entries.filter((entry) => entry.at >= start && entry.at < end).map((entry) => ({ stream, entry })))
    .sort((a, b) => (forward ? a.entry.at - b.entry.at : b.entry.at - a.entry.at))
    .slice(0, limit);
  const byStream = new Map<Stream, Array<[string, string]>>();
  for (const { stream, entry } of picked) {
    const values = byStream.get(stream) ?? [];
    values.push([`${entry.at}000000`, entry.line]);
    byStream.set(stream, values);
  }
  const result = [...byStream].map(([stream, values]) => ({ stream: stream.labels, values }));
  return { status: "success", data: { resultType: "streams", result, stats: {} } };
}

/** The index of the first time after `at` in sorted times (binary search). */
function firstAfter(times: readonly number[], at: number): number {
  let low = 0;
  let high = times.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if ((times[middle] ?? 0) <= at) low = middle + 1;
    else high = middle;
  }
  return low;
}

interface Selection {
  matchers: Array<{ name: string; op: string; value: string }>;
  filters: Array<{ op: string; value: string }>;
}

function select(streams: readonly Stream[], selection: Selection): Stream[] {
  return streams
    .filter((stream) => selection.matchers.every((matcher) => matches(matcher.op, stream.labels[matcher.name] ?? "", matcher.value, true)))
    .map((stream) => ({
      labels: stream.labels,
      entries: stream.entries.filter((entry) => selection.filters.every((filter) => matches(filter.op, entry.line, filter.value, false))),
    }));
}

function matches(op: string, text: string, value: string, anchored: boolean): boolean {
  switch (op) {
    case "=":
      return text === value;
    case "!=":
      return anchored ? text !== value : !text.includes(value);
    case "|=":
      return text.includes(value);
    case "=~":
    case "|~":
      return new RegExp(anchored ? `^(?:${value})$` : value).test(text);
    case "!~":
      return !new RegExp(anchored ? `^(?:${value})$` : value).test(text);
    default:
      return false;
  }
}

/** Parses `{matchers} filters…`; `offset` is where `text` starts in the whole query, for error columns. */
function parseLogQuery(text: string, offset: number): Selection {
  let index = 0;
  const fail = (what: string): never => {
    throw new LokiError(`parse error at line 1, col ${offset + index + 1}: syntax error: ${what}`);
  };
  const space = () => {
    while (index < text.length && /\s/.test(text[index] ?? "")) index += 1;
  };
  const string = (): string => {
    space();
    const quote = text[index];
    if (quote === "`") {
      const close = text.indexOf("`", index + 1);
      if (close < 0) fail("unterminated raw string");
      const value = text.slice(index + 1, close);
      index = close + 1;
      return value;
    }
    if (quote !== '"') return fail(`unexpected ${JSON.stringify(text.slice(index, index + 10))}, expecting STRING`);
    let end = index + 1;
    while (end < text.length && text[end] !== '"') end += text[end] === "\\" ? 2 : 1;
    if (end >= text.length) fail("unterminated string");
    const literal = text.slice(index, end + 1);
    try {
      const value: unknown = JSON.parse(literal);
      index = end + 1;
      return String(value);
    } catch {
      return fail(`invalid string literal ${literal}`);
    }
  };
  const selection: Selection = { matchers: [], filters: [] };
  space();
  if (text[index] !== "{") fail("unexpected character, expecting {");
  index += 1;
  for (;;) {
    space();
    if (text[index] === "}") {
      index += 1;
      break;
    }
    const name = /^[A-Za-z_][A-Za-z0-9_]*/.exec(text.slice(index))?.[0];
    if (name === undefined) fail("unexpected character, expecting IDENTIFIER");
    index += name?.length ?? 0;
    space();
    const op = /^(=~|!~|!=|=)/.exec(text.slice(index))?.[0];
    if (op === undefined) fail("unexpected character, expecting = or != or =~ or !~");
    index += op?.length ?? 0;
    selection.matchers.push({ name: name ?? "", op: op ?? "", value: string() });
    space();
    if (text[index] === ",") index += 1;
    else if (text[index] !== "}") fail("unexpected character, expecting , or }");
  }
  if (!selection.matchers.some((matcher) => !matches(matcher.op, "", matcher.value, true))) {
    throw new LokiError(
      'parse error : queries require at least one regexp or equality matcher that does not have an empty-compatible value. For instance, app=~".*" does not meet this requirement, but app=~".+" will',
    );
  }
  for (;;) {
    space();
    if (index >= text.length) return selection;
    const op = /^(\|=|!=|\|~|!~)/.exec(text.slice(index))?.[0];
    if (op === undefined) return fail(`unexpected ${JSON.stringify(text.slice(index, index + 10))}`);
    index += op.length;
    selection.filters.push({ op, value: string() });
  }
}

/** A time as Loki reads one: nanoseconds (an integer of more than 12 digits), seconds, or RFC 3339. */
function timeParameter(value: string | null, fallback: number): number {
  if (value === null) return fallback;
  if (/^\d{13,}$/.test(value)) {
    // Milliseconds with the nanoseconds as a fraction: an end of `…999999` reaches through that millisecond.
    const nanoseconds = BigInt(value);
    return Number(nanoseconds / 1_000_000n) + Number(nanoseconds % 1_000_000n) / 1e6;
  }
  if (/^\d+(\.\d+)?$/.test(value)) return Number(value) * 1000;
  const parsed = Date.parse(value);
  if (Number.isNaN(parsed)) throw new LokiError(`invalid parameter "start": cannot parse "${value}" to a valid timestamp`);
  return parsed;
}

/** A step as Loki reads one: seconds (with a fraction) or a duration such as `60s`, `1m`. */
function durationParameter(value: string | null): number {
  if (value === null) throw new LokiError("step must be specified for a metric query in this fake");
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(value);
  if (match === null) throw new LokiError(`invalid parameter "step": cannot parse "${value}" to a valid duration`);
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[(match[2] ?? "s") as "ms" | "s" | "m" | "h"];
  const step = Number(match[1]) * unit;
  if (step <= 0) throw new LokiError("zero or negative query resolution step widths are not accepted");
  return step;
}
