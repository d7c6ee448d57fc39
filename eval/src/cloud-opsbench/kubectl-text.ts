/**
 * Readers of kubectl's text output: `get` tables, `describe` fields (indented `Key: value` lines), the
 * ages kubectl prints (`93s`, `3h50m`, `0s (x9 over 80s)`) and its dates (`Fri, 28 Nov 2025 15:31:20 +0800`).
 * Everything here is generic: nothing knows a cluster's names.
 */

/** One `Key: value` field of a describe output, with the lines under it (more indented, or without a key). */
export interface DescribeField {
  key: string;
  value: string;
  lines: string[];
}

const FIELD = /^([A-Za-z][\w .\-/()]*?):(?:\s+(.*?))?\s*$/;

function indentOf(line: string): number {
  return line.length - line.trimStart().length;
}

/**
 * Splits lines into the fields at their shallowest indent: a line at that indent that reads `Key:` or
 * `Key:  value` starts a field; every other line belongs to the field before it.
 */
export function describeFields(text: string | readonly string[]): DescribeField[] {
  const lines = (typeof text === "string" ? text.split("\n") : [...text]).filter((line) => line.trim() !== "");
  if (lines.length === 0) return [];
  const indent = Math.min(...lines.map(indentOf));
  const fields: DescribeField[] = [];
  for (const line of lines) {
    const match = indentOf(line) === indent ? FIELD.exec(line.trimStart()) : null;
    if (match !== null) {
      fields.push({ key: (match[1] ?? "").trim(), value: match[2] ?? "", lines: [] });
    } else {
      fields.at(-1)?.lines.push(line);
    }
  }
  return fields;
}

/** The first field of that key, if any. */
export function field(fields: readonly DescribeField[], key: string): DescribeField | undefined {
  return fields.find((candidate) => candidate.key === key);
}

/** A field's value, `undefined` for `<none>`, `<unset>`, `<nil>` or empty. */
export function value(fields: readonly DescribeField[], key: string): string | undefined {
  const found = field(fields, key)?.value.trim();
  return found === undefined || isNone(found) ? undefined : found;
}

export function isNone(text: string): boolean {
  return text === "" || text === "<none>" || text === "<unset>" || text === "<nil>" || text === "<unknown>";
}

/** A multi-line list field (Labels, Taints, Tolerations): its value and each line under it, trimmed. */
export function listValues(found: DescribeField | undefined): string[] {
  if (found === undefined) return [];
  return [found.value, ...found.lines].map((line) => line.trim()).filter((line) => !isNone(line));
}

/** `a=b` lines (Labels, Node-Selectors) as a record; a line without `=` is a key with an empty value. */
export function keyValues(lines: readonly string[], separator = "="): Record<string, string> {
  const record: Record<string, string> = {};
  for (const line of lines) {
    for (const part of line.split(",")) {
      const text = part.trim();
      if (isNone(text)) continue;
      const at = text.indexOf(separator);
      if (at < 0) record[text] = "";
      else record[text.slice(0, at).trim()] = text.slice(at + separator.length).trim();
    }
  }
  return record;
}

/** The `name: value` lines under a field (Limits, Requests, Capacity, Environment) as a record. */
export function subFields(found: DescribeField | undefined): Record<string, string> {
  const record: Record<string, string> = {};
  if (found === undefined) return record;
  for (const line of found.lines) {
    const match = /^\s*([^:\s][^:]*?):\s*(.*?)\s*$/.exec(line);
    if (match?.[1] !== undefined) record[match[1]] = match[2] ?? "";
  }
  return record;
}

/** A table row, by the header's column names. */
export type TableRow = Record<string, string>;

/**
 * Reads a table kubectl aligned in columns (a `get` output, a describe's Events or Conditions): the
 * header's names start the columns, a row's cells are cut at the same places; the last cell runs to
 * the line's end. Lines before the header and separator lines (`----`) are skipped.
 */
export function parseTable(text: string | readonly string[], headerPattern?: RegExp): TableRow[] {
  const lines = (typeof text === "string" ? text.split("\n") : [...text]).filter((line) => line.trim() !== "");
  const headerAt = headerPattern === undefined ? 0 : lines.findIndex((line) => headerPattern.test(line));
  const header = lines[headerAt];
  if (header === undefined) return [];
  const columns: Array<{ name: string; start: number }> = [];
  for (const match of header.matchAll(/\S+(?: \S+)*/g)) columns.push({ name: match[0], start: match.index });
  const rows: TableRow[] = [];
  for (const line of lines.slice(headerAt + 1)) {
    if (/^\s*-{2,}(\s+-{2,})*\s*$/.test(line)) continue;
    const row: TableRow = {};
    columns.forEach((column, index) => {
      const next = columns[index + 1];
      row[column.name] = cell(line, column.start, next?.start).trim();
    });
    rows.push(row);
  }
  return rows;
}

/**
 * The text of a cell from its column's start to the next column's start, moved to word boundaries: a
 * value wider than its header (kubectl widens the column, so this only happens when a header was
 * shorter than it) is not cut in the middle of a word.
 */
function cell(line: string, start: number, end: number | undefined): string {
  let from = start;
  while (from > 0 && from < line.length && line[from - 1] !== " ") from -= 1;
  if (end === undefined) return line.slice(from);
  let to = end;
  while (to > from && to < line.length && line[to - 1] !== " ") to -= 1;
  return line.slice(from, to);
}

const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, y: 365 * 86_400_000 };

/** An age kubectl prints (`93s`, `2m3s`, `3h50m`, `49d`), in milliseconds; `undefined` when it is not one. */
export function ageMs(text: string): number | undefined {
  const trimmed = text.trim();
  if (!/^(\d+[smhdy])+$/.test(trimmed)) return undefined;
  let total = 0;
  for (const match of trimmed.matchAll(/(\d+)([smhdy])/g)) total += Number(match[1]) * (UNIT_MS[match[2] ?? "s"] ?? 0);
  return total;
}

/** An event's age column: the last time, and with `(x9 over 80s)` the count and the first time. */
export interface EventAge {
  lastMs?: number;
  firstMs?: number;
  count?: number;
}

export function eventAge(text: string): EventAge {
  const match = /^(\S+)(?:\s+\(x(\d+) over (\S+)\))?$/.exec(text.trim());
  if (match === null) return {};
  const last = ageMs(match[1] ?? "");
  const first = match[3] === undefined ? last : ageMs(match[3]);
  return {
    ...(last === undefined ? {} : { lastMs: last }),
    ...(first === undefined ? {} : { firstMs: first }),
    ...(match[2] === undefined ? {} : { count: Number(match[2]) }),
  };
}

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/**
 * A date kubectl describe prints (`Fri, 28 Nov 2025 15:31:20 +0800`, RFC 1123 with a numeric zone) as
 * RFC 3339; `undefined` when it is not one.
 */
export function describeDate(text: string): string | undefined {
  const match = /(\d{1,2}) (\w{3}) (\d{4}) (\d{2}):(\d{2}):(\d{2}) ([+-])(\d{2})(\d{2})/.exec(text);
  if (match === null) return undefined;
  const [, day, month, year, hour, minute, second, sign, offsetHours, offsetMinutes] = match;
  const monthIndex = MONTHS.indexOf(month ?? "");
  if (monthIndex < 0) return undefined;
  const pad = (part: string | undefined) => (part ?? "").padStart(2, "0");
  return `${year}-${pad(String(monthIndex + 1))}-${pad(day)}T${hour}:${minute}:${second}${sign}${offsetHours}:${offsetMinutes}`;
}

/** The zone offset (`+08:00`) of the first describe date in a text, if any. */
export function zoneOfDescribeDates(text: string): string | undefined {
  const match = /\d{2}:\d{2}:\d{2} ([+-])(\d{2})(\d{2})\b/.exec(text);
  return match === null ? undefined : `${match[1]}${match[2]}:${match[3]}`;
}

/**
 * A local date without a zone (`2025-11-28T15:33:20.568512`, `2025-12-26 12:22:11`) read in the zone
 * given (`+08:00`), as RFC 3339 with milliseconds at most; `undefined` when it is not one.
 */
export function localDate(text: string, zone: string): string | undefined {
  const match = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}:\d{2})(\.\d+)?$/.exec(text.trim());
  if (match === null) return undefined;
  const fraction = match[3] === undefined ? "" : match[3].slice(0, 4);
  return `${match[1]}T${match[2]}${fraction}${zone}`;
}

/** An instant `ms` before `now`, as RFC 3339 in UTC. */
export function before(now: Date, ms: number): string {
  return new Date(now.getTime() - ms).toISOString();
}
