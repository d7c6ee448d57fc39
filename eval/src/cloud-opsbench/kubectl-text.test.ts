import { describe, expect, it } from "vitest";
import {
  ageMs,
  describeDate,
  describeFields,
  eventAge,
  keyValues,
  listValues,
  localDate,
  parseTable,
  subFields,
  value,
  zoneOfDescribeDates,
} from "./kubectl-text.js";

describe("describe fields", () => {
  const text = `Name:         web-1
Labels:       app=web
              tier=front
Annotations:  <none>
Limits:
  cpu:     200m
  memory:  64Mi
Message:      a: b: c`;

  it("splits fields at their indent and keeps the lines under each", () => {
    const fields = describeFields(text);
    expect(fields.map((field) => field.key)).toEqual(["Name", "Labels", "Annotations", "Limits", "Message"]);
    expect(value(fields, "Name")).toBe("web-1");
    expect(value(fields, "Annotations")).toBeUndefined();
    expect(keyValues(listValues(fields[1]))).toEqual({ app: "web", tier: "front" });
    expect(subFields(fields[3])).toEqual({ cpu: "200m", memory: "64Mi" });
    // Only the first colon separates a key from its value.
    expect(value(fields, "Message")).toBe("a: b: c");
  });
});

describe("tables", () => {
  it("cuts rows where the header's columns start, headers of several words included", () => {
    const rows = parseTable(`NAME    READY   STATUS             NOMINATED NODE   READINESS GATES
web-1   0/1     CrashLoopBackOff   <none>           <none>`);
    expect(rows).toEqual([{ NAME: "web-1", READY: "0/1", STATUS: "CrashLoopBackOff", "NOMINATED NODE": "<none>", "READINESS GATES": "<none>" }]);
  });

  it("skips lines before the header and separator lines; the last cell runs to the end", () => {
    const rows = parseTable(
      `Events:
  Type     Reason   Age               From      Message
  ----     ------   ----              ----      -------
  Warning  BackOff  5s (x4 over 1m)   kubelet   Back-off restarting failed container`,
      /^\s*Type\s+Reason/,
    );
    expect(rows).toEqual([{ Type: "Warning", Reason: "BackOff", Age: "5s (x4 over 1m)", From: "kubelet", Message: "Back-off restarting failed container" }]);
  });
});

describe("ages and dates", () => {
  it("reads kubectl's ages", () => {
    expect(ageMs("93s")).toBe(93_000);
    expect(ageMs("2m3s")).toBe(123_000);
    expect(ageMs("3h50m")).toBe(13_800_000);
    expect(ageMs("49d")).toBe(49 * 86_400_000);
    expect(ageMs("<unknown>")).toBeUndefined();
  });

  it("reads an event's age with its count and first time", () => {
    expect(eventAge("0s (x9 over 80s)")).toEqual({ lastMs: 0, firstMs: 80_000, count: 9 });
    expect(eventAge("36s")).toEqual({ lastMs: 36_000, firstMs: 36_000 });
  });

  it("reads describe's dates with their zone, and local times in a zone", () => {
    expect(describeDate("Fri, 28 Nov 2025 15:31:20 +0800")).toBe("2025-11-28T15:31:20+08:00");
    expect(describeDate("Mon, 02 Mar 2026 09:58:00 -0530")).toBe("2026-03-02T09:58:00-05:30");
    expect(zoneOfDescribeDates("Start Time:  Fri, 28 Nov 2025 15:31:20 +0800")).toBe("+08:00");
    expect(localDate("2025-11-28T15:33:20.568512", "+08:00")).toBe("2025-11-28T15:33:20.568+08:00");
    expect(localDate("2025-12-26 12:22:11", "+00:00")).toBe("2025-12-26T12:22:11+00:00");
  });
});
