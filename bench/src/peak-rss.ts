import { readFileSync } from "node:fs";

/**
 * A process's peak resident memory so far, in MB (10^6 bytes): the kernel's own high-water mark, VmHWM in
 * /proc/<pid>/status (Linux). It covers the process's whole life, so read after scenario 2 it is at least
 * the peak during it, without sampling. NaN where it cannot be read (another OS, a process gone).
 */
export function peakRssMB(pid: number): number {
  try {
    const kiB = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
    return kiB === undefined ? Number.NaN : (Number(kiB) * 1024) / 1e6;
  } catch {
    return Number.NaN;
  }
}
