import { readFileSync } from "node:fs";

export interface MemoryPeak {
  /** Highest VmRSS sampled while the sampler ran, in MiB. */
  peakRssMiB: number;
  /** The kernel's own high-water mark (VmHWM) at the end, in MiB: covers the process's whole life. */
  highWaterMiB: number;
  samples: number;
}

function readStatusKiB(pid: number, field: "VmRSS" | "VmHWM"): number | undefined {
  try {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return match?.[1] === undefined ? undefined : Number(match[1]);
  } catch {
    return undefined;
  }
}

/**
 * Samples the resident set of some processes every `intervalMs` from /proc (Linux), without touching
 * them. `stop()` returns each pid's peak.
 */
export function startMemorySampler(pids: readonly number[], intervalMs = 100): { stop(): Map<number, MemoryPeak> } {
  const peaks = new Map<number, { peakKiB: number; samples: number }>(pids.map((pid) => [pid, { peakKiB: 0, samples: 0 }]));
  const sample = (): void => {
    for (const [pid, peak] of peaks) {
      const rss = readStatusKiB(pid, "VmRSS");
      if (rss === undefined) continue;
      peak.peakKiB = Math.max(peak.peakKiB, rss);
      peak.samples += 1;
    }
  };
  sample();
  const timer = setInterval(sample, intervalMs);
  return {
    stop() {
      clearInterval(timer);
      sample();
      const result = new Map<number, MemoryPeak>();
      for (const [pid, peak] of peaks) {
        result.set(pid, {
          peakRssMiB: peak.peakKiB / 1024,
          highWaterMiB: (readStatusKiB(pid, "VmHWM") ?? 0) / 1024,
          samples: peak.samples,
        });
      }
      return result;
    },
  };
}
