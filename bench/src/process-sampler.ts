import { readFileSync } from "node:fs";

/** Linux's USER_HZ: /proc/<pid>/stat counts CPU time in these ticks (100 on every mainstream kernel). */
const TICKS_PER_SECOND = 100;

export interface ProcessUsage {
  /** Highest VmRSS sampled while the sampler ran, in MB (10^6 bytes). */
  peakRssMB: number;
  /** The kernel's own high-water mark (VmHWM) at the end, in MB (10^6 bytes): covers the process's whole life. */
  highWaterMB: number;
  /** CPU time (user + system) over the sampled interval, as a percentage of one core. */
  cpuPercent: number;
  /** The same CPU time in seconds. */
  cpuSeconds: number;
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

/** utime + stime in ticks; the command name may hold spaces, so fields are counted after its ')'. */
function readCpuTicks(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // After the name: state is field 3 (index 0 here), utime field 14 (index 11), stime field 15 (index 12).
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return undefined;
  }
}

/** Whole-machine CPU ticks from /proc/stat's first line: busy (all but idle, iowait, steal) and steal. */
function readMachineTicks(): { busy: number; steal: number; total: number } | undefined {
  try {
    const line = readFileSync("/proc/stat", "utf8").split("\n")[0] ?? "";
    const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = line
      .trim()
      .split(/\s+/)
      .slice(1)
      .map(Number);
    return { busy: user + nice + system + irq + softirq, steal, total: user + nice + system + idle + iowait + irq + softirq + steal };
  } catch {
    return undefined;
  }
}

export interface MachineUsage {
  /** Busy CPU of the whole machine over the interval, in % of one core (2 cores → at most 200). */
  busyPercent: number;
  /** CPU the hypervisor gave to other guests while this one wanted it (steal), in % of one core. */
  stealPercent: number;
}

/**
 * Samples resident memory of some processes every `intervalMs` from /proc (Linux) and their CPU time
 * between start and stop, without touching them. `stop()` returns each pid's figures.
 */
export function startProcessSampler(
  pids: readonly number[],
  intervalMs = 100,
): { stop(): { processes: Map<number, ProcessUsage>; machine: MachineUsage } } {
  const started = performance.now();
  const machineStart = readMachineTicks();
  const state = new Map(pids.map((pid) => [pid, { peakKiB: 0, samples: 0, startTicks: readCpuTicks(pid) }]));
  const sample = (): void => {
    for (const [pid, entry] of state) {
      const rss = readStatusKiB(pid, "VmRSS");
      if (rss === undefined) continue;
      entry.peakKiB = Math.max(entry.peakKiB, rss);
      entry.samples += 1;
    }
  };
  sample();
  const timer = setInterval(sample, intervalMs);
  return {
    stop() {
      clearInterval(timer);
      sample();
      const elapsedSeconds = (performance.now() - started) / 1000;
      const result = new Map<number, ProcessUsage>();
      for (const [pid, entry] of state) {
        const endTicks = readCpuTicks(pid);
        const cpuSeconds =
          endTicks === undefined || entry.startTicks === undefined ? Number.NaN : (endTicks - entry.startTicks) / TICKS_PER_SECOND;
        result.set(pid, {
          peakRssMB: (entry.peakKiB * 1024) / 1e6,
          highWaterMB: ((readStatusKiB(pid, "VmHWM") ?? 0) * 1024) / 1e6,
          cpuPercent: (100 * cpuSeconds) / elapsedSeconds,
          cpuSeconds,
          samples: entry.samples,
        });
      }
      const machineEnd = readMachineTicks();
      const machine =
        machineStart === undefined || machineEnd === undefined
          ? { busyPercent: Number.NaN, stealPercent: Number.NaN }
          : {
              busyPercent: (100 * (machineEnd.busy - machineStart.busy)) / TICKS_PER_SECOND / elapsedSeconds,
              stealPercent: (100 * (machineEnd.steal - machineStart.steal)) / TICKS_PER_SECOND / elapsedSeconds,
            };
      return { processes: result, machine };
    },
  };
}
