import { describe, expect, it } from "vitest";
import { formatClock, formatDuration, formatElapsed, formatPeriodBefore, formatRange, formatRatio, formatValue, formatValueOf } from "./human-format.js";

describe("formatValue", () => {
  it.each([
    [0.45, "s", "450 ms"],
    [1.8, "s", "1.8 s"],
    [1.8456, "s", "1.85 s"],
    [0.9996, "s", "1 s"],
    [150, "s", "2.5 min"],
    [7200, "s", "2 h"],
    [0.000_25, "s", "250 µs"],
    [0, "s", "0 s"],
    [450, "ms", "450 ms"],
    [1800, "ms", "1.8 s"],
    [512, "bytes", "512 B"],
    [1536, "bytes", "1.5 KiB"],
    [3.4 * 1024 ** 2, "bytes", "3.4 MiB"],
    [5 * 1024 ** 3, "bytes", "5 GiB"],
    [12.345, "percent", "12.3%"],
    [0.031, "ratio", "3.1%"],
    [1234, "req/s", "1.23k req/s"],
    [12, "req/s", "12 req/s"],
    [0.5, undefined, "0.5"],
    [2_500_000, undefined, "2.5M"],
    [-1.8, "s", "-1.8 s"],
    [Number.NaN, "s", "NaN s"],
  ] as const)("%s %s → %s", (value, unit, expected) => {
    expect(formatValue(value, unit)).toBe(expected);
  });
});

describe("formatRange", () => {
  it("writes a shared unit once", () => {
    expect(formatRange(0.41, 0.47, "s")).toBe("410–470 ms");
    expect(formatRange(0.9, 1.2, "s")).toBe("900 ms–1.2 s");
    expect(formatRange(3, 3, "req/s")).toBe("3 req/s");
    expect(formatRange(0.01, 0.02, "ratio")).toBe("1–2%");
  });
});

describe("formatRatio", () => {
  it("keeps two significant digits", () => {
    expect(formatRatio(4.0909)).toBe("4.1");
    expect(formatRatio(12.4)).toBe("12");
    expect(formatRatio(0.2512)).toBe("0.25");
    expect(formatRatio(123)).toBe("120");
  });
});

describe("formatPeriodBefore", () => {
  it("names the baseline period in words", () => {
    expect(formatPeriodBefore(3_600_000)).toBe("the hour before");
    expect(formatPeriodBefore(30 * 60_000)).toBe("the 30 minutes before");
    expect(formatPeriodBefore(90 * 60_000)).toBe("the 90 minutes before");
    expect(formatPeriodBefore(2 * 86_400_000)).toBe("the 2 days before");
    expect(formatPeriodBefore(90_000)).toBe("the 90 seconds before");
    expect(formatPeriodBefore(60_000)).toBe("the minute before");
  });

  it("rounds a period of 10 minutes or more to whole minutes", () => {
    expect(formatPeriodBefore(3_601_234)).toBe("the hour before");
    expect(formatPeriodBefore(65 * 60_000 + 20_000)).toBe("the 65 minutes before");
    expect(formatPeriodBefore(9 * 60_000 + 20_000)).toBe("the 560 seconds before");
  });
});

describe("formatValueOf", () => {
  it("writes a value out of its limit, the unit once when both share it", () => {
    expect(formatValueOf(98, 100)).toBe("98 of 100");
    expect(formatValueOf(100, 100, "conns")).toBe("100 of 100 conns");
    expect(formatValueOf(1.2 * 2 ** 30, 60 * 2 ** 30, "bytes")).toBe("1.2 of 60 GiB");
    expect(formatValueOf(900 * 2 ** 20, 60 * 2 ** 30, "bytes")).toBe("900 MiB of 60 GiB");
  });
});

describe("formatElapsed", () => {
  it("says how long one thing came before another as a person reads it, without odd precision", () => {
    expect(formatElapsed(1_170)).toBe("1 s");
    expect(formatElapsed(1_750)).toBe("2 s");
    expect(formatElapsed(400)).toBe("less than a second");
    expect(formatElapsed(61_200)).toBe("1 min");
    expect(formatElapsed(19.3 * 60_000)).toBe("19 min");
    expect(formatElapsed(6 * 60_000)).toBe("6 min");
    expect(formatElapsed(59 * 60_000 + 45_000)).toBe("1 h");
    expect(formatElapsed(65 * 60_000 + 10_000)).toBe("1 h 5 min");
    expect(formatElapsed(26 * 3_600_000 + 20 * 60_000)).toBe("1 d 2 h");
    expect(formatElapsed(-6 * 60_000)).toBe("6 min");
  });
});

describe("formatClock and formatDuration", () => {
  it("writes UTC clock times, with the date when the day differs", () => {
    const at = new Date("2026-11-21T14:05:42Z");
    expect(formatClock(at, new Date("2026-11-21T23:00:00Z"))).toBe("14:05 UTC");
    expect(formatClock(at, new Date("2026-11-22T00:10:00Z"))).toBe("2026-11-21 14:05 UTC");
    expect(formatClock(at)).toBe("2026-11-21 14:05 UTC");
  });

  it("writes durations for messages", () => {
    expect(formatDuration(15_000)).toBe("15 s");
    expect(formatDuration(200)).toBe("200 ms");
  });
});
