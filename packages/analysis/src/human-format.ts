/**
 * How numbers, durations and times read in short answers and highlights. Everything here is pure and
 * deterministic (UTC only, fixed rounding), so the same data always yields the same sentence.
 */

interface Parts {
  number: string;
  /** The unit written after the number; empty for a bare number. */
  suffix: string;
  /** Whether a space separates number and suffix ("450 ms", but "12%"). */
  spaced: boolean;
}

const DURATION_SCALES: ReadonlyArray<readonly [number, string]> = [
  [86_400, "d"],
  [3_600, "h"],
  [60, "min"],
  [1, "s"],
  [1e-3, "ms"],
  [1e-6, "µs"],
  [1e-9, "ns"],
];
/** From this many seconds on, a baseline period is named in whole minutes. */
const PERIOD_IN_MINUTES_FROM_S = 10 * 60;
const BYTE_SCALES = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"] as const;
const DECIMAL_SCALES: ReadonlyArray<readonly [number, string]> = [
  [1e12, "T"],
  [1e9, "G"],
  [1e6, "M"],
  [1e3, "k"],
];

/**
 * A value with its unit, to three significant digits: `s`/`ms` as human durations ("450 ms", "1.8 s",
 * "2.5 min"), `bytes` in binary multiples ("3.2 MiB"), `percent` as is ("12%"), `ratio` as a percentage
 * (0.12 → "12%"), any other unit as a suffix ("1.2k req/s"), no unit as a bare number.
 */
export function formatValue(value: number, unit?: string): string {
  return joinParts(valueParts(value, unit));
}

/** A range such as "410–470 ms", or "900 ms–1.2 s" when the ends need different scales. */
export function formatRange(low: number, high: number, unit?: string): string {
  const a = valueParts(low, unit);
  const b = valueParts(high, unit);
  if (a.number === b.number && a.suffix === b.suffix) return joinParts(a);
  if (a.suffix === b.suffix) return joinParts({ ...b, number: `${a.number}–${b.number}` });
  return `${joinParts(a)}–${joinParts(b)}`;
}

/** "98 of 100 conns", "900 MiB of 60 GiB": a value out of a limit, the unit written once when both share it. */
export function formatValueOf(value: number, limit: number, unit?: string): string {
  const a = valueParts(value, unit);
  const b = valueParts(limit, unit);
  if (a.suffix === b.suffix) return joinParts({ ...b, number: `${a.number} of ${b.number}` });
  return `${joinParts(a)} of ${joinParts(b)}`;
}

/** A ratio to two significant digits, without the "×": 4.1, 12, 0.25. */
export function formatRatio(ratio: number): string {
  return significant(ratio, 2);
}

/** "the hour before", "the 30 minutes before", "the 2 days before": the baseline period in words. */
export function formatPeriodBefore(milliseconds: number): string {
  const exact = Math.max(1, Math.round(milliseconds / 1000));
  // A period of 10 minutes or more reads in whole minutes: "the 3601 seconds before" is the hour before.
  const seconds = exact >= PERIOD_IN_MINUTES_FROM_S ? Math.round(exact / 60) * 60 : exact;
  const units: ReadonlyArray<readonly [number, string]> = [
    [86_400, "day"],
    [3_600, "hour"],
    [60, "minute"],
    [1, "second"],
  ];
  for (const [size, name] of units) {
    if (seconds % size === 0) {
      const count = seconds / size;
      return count === 1 ? `the ${name} before` : `the ${count} ${name}s before`;
    }
  }
  return `the ${seconds} seconds before`;
}

/**
 * How long one thing came before another, as a person reads it: whole seconds under a minute, whole
 * minutes under an hour, then hours and minutes, days and hours ("2 s", "6 min", "1 h 5 min", "2 d 3 h").
 * Onsets are dated to a sample or a log line, so "1.17 s" or "1.02 min" would be precision they lack.
 */
export function formatElapsed(milliseconds: number): string {
  const seconds = Math.round(Math.abs(milliseconds) / 1000);
  if (seconds === 0) return "less than a second";
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return `${minutes} min`;
  if (minutes < 24 * 60) return withRest(Math.floor(minutes / 60), "h", minutes % 60, "min");
  const hours = Math.round(minutes / 60);
  return withRest(Math.floor(hours / 24), "d", hours % 24, "h");
}

/** "1 h 5 min", "2 h": a count of one unit and what is left of the next. */
function withRest(count: number, unit: string, rest: number, restUnit: string): string {
  return rest === 0 ? `${count} ${unit}` : `${count} ${unit} ${rest} ${restUnit}`;
}

/** A duration for messages, as exact as it was set: "15 s", "500 ms", "2 min". */
export function formatDuration(milliseconds: number): string {
  return formatValue(milliseconds / 1000, "s");
}

/** "14:05 UTC", or "2026-11-20 14:05 UTC" when `at` is not on the same UTC day as `reference`. */
export function formatClock(at: Date, reference?: Date): string {
  const iso = at.toISOString();
  const sameDay = reference !== undefined && reference.toISOString().slice(0, 10) === iso.slice(0, 10);
  return sameDay ? `${iso.slice(11, 16)} UTC` : `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
}

function valueParts(value: number, unit: string | undefined): Parts {
  if (!Number.isFinite(value)) {
    const number = Number.isNaN(value) ? "NaN" : value > 0 ? "+Inf" : "-Inf";
    return { number, suffix: unit ?? "", spaced: true };
  }
  const sign = value < 0 ? "-" : "";
  const magnitude = Math.abs(value);
  const parts = magnitudeParts(magnitude, unit);
  return { ...parts, number: `${sign}${parts.number}` };
}

function magnitudeParts(value: number, unit: string | undefined): Parts {
  switch (unit) {
    case "s":
      return durationParts(value);
    case "ms":
      return durationParts(value / 1000);
    case "bytes":
      return byteParts(value);
    case "percent":
    case "%":
      return { number: significant(value, 3), suffix: "%", spaced: false };
    case "ratio":
      return { number: significant(value * 100, 3), suffix: "%", spaced: false };
    case undefined:
    case "":
      return decimalParts(value, "");
    default:
      return decimalParts(value, unit);
  }
}

function durationParts(seconds: number): Parts {
  if (seconds === 0) return { number: "0", suffix: "s", spaced: true };
  // Round first so that 0.9996 s reads "1 s", not "1000 ms".
  const rounded = Number(seconds.toPrecision(3));
  const scale = DURATION_SCALES.find(([size]) => rounded >= size) ?? DURATION_SCALES[DURATION_SCALES.length - 1];
  const [size, suffix] = scale ?? [1, "s"];
  return { number: significant(rounded / size, 3), suffix, spaced: true };
}

function byteParts(bytes: number): Parts {
  let scaled = Number(bytes.toPrecision(3));
  let index = 0;
  while (scaled >= 1024 && index < BYTE_SCALES.length - 1) {
    scaled /= 1024;
    index += 1;
  }
  return { number: significant(scaled, 3), suffix: BYTE_SCALES[index] ?? "B", spaced: true };
}

function decimalParts(value: number, suffix: string): Parts {
  const rounded = Number(value.toPrecision(3));
  for (const [size, prefix] of DECIMAL_SCALES) {
    if (rounded >= size) return { number: `${significant(rounded / size, 3)}${prefix}`, suffix, spaced: true };
  }
  return { number: significant(value, 3), suffix, spaced: true };
}

/** `digits` significant digits, without trailing zeros or exponent for everyday magnitudes. */
function significant(value: number, digits: number): string {
  if (value === 0) return "0";
  const rounded = Number(value.toPrecision(digits));
  // Beyond 1e21 or below 1e-6 String() switches to exponent notation, which is fine there.
  return String(rounded);
}

function joinParts(parts: Parts): string {
  if (parts.suffix === "") return parts.number;
  return parts.spaced ? `${parts.number} ${parts.suffix}` : `${parts.number}${parts.suffix}`;
}
