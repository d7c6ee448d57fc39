import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";

/**
 * utime + stime of a `/proc/<pid>/stat` line, in clock ticks: fields 14 and 15. The command name
 * (field 2, in parentheses) may hold spaces and parentheses, so fields are counted after its last `)`.
 */
export function cpuTicksOfStat(stat: string): number {
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // fields[0] is field 3 (state): utime is field 14, stime field 15.
  return Number(fields[11]) + Number(fields[12]);
}

let ticksPerSecond: number | undefined;

/** USER_HZ, the unit of /proc's CPU times (100 on every Linux this runs on; asked once, to be sure). */
function clockTicksPerSecond(): number {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

/**
 * CPU seconds (user + system) a process has used so far, from `/proc/<pid>/stat` (Linux), to 10 ms.
 * NaN where it cannot be read (another OS, a process gone), so a figure built on it is never a pass.
 */
export function cpuSeconds(pid: number): number {
  try {
    return cpuTicksOfStat(readFileSync(`/proc/${pid}/stat`, "utf8")) / clockTicksPerSecond();
  } catch {
    return Number.NaN;
  }
}

/** The processes of one path by role (`api`, `workers`, `redis`…): each role's CPU is summed over its pids. */
export type ProcessRoles = Readonly<Record<string, readonly number[]>>;

/** CPU seconds per role, summed over the role's processes. */
export function readCpuSeconds(roles: ProcessRoles): Record<string, number> {
  return Object.fromEntries(Object.entries(roles).map(([role, pids]) => [role, pids.reduce((total, pid) => total + cpuSeconds(pid), 0)]));
}

/** CPU a path spent per operation (execution, job) over a measured window, in µs, in all and by role. */
export interface CpuPerOperation {
  operations: number;
  /** Every role's CPU over the window / `operations`. */
  totalUs: number;
  byRoleUs: Record<string, number>;
}

/**
 * CPU per operation between two readings of `readCpuSeconds`. NaN when a reading is missing or no
 * operation completed: never a figure that looks measured.
 */
export function cpuPerOperation(before: Readonly<Record<string, number>>, after: Readonly<Record<string, number>>, operations: number): CpuPerOperation {
  const byRoleUs = Object.fromEntries(
    Object.keys(after).map((role) => [role, operations > 0 ? (((after[role] ?? Number.NaN) - (before[role] ?? Number.NaN)) * 1e6) / operations : Number.NaN]),
  );
  const totalUs = Object.keys(byRoleUs).length === 0 ? Number.NaN : Object.values(byRoleUs).reduce((total, us) => total + us, 0);
  return { operations, totalUs, byRoleUs };
}

/**
 * Reads the roles' CPU around one measured run (not its warm-up): `around` wraps the run, `per(n)`
 * then divides what the processes spent inside it by the `n` operations it completed.
 */
export function cpuWindow(roles: ProcessRoles) {
  let before: Record<string, number> = {};
  let after: Record<string, number> = {};
  return {
    around: async <T>(run: () => Promise<T>): Promise<T> => {
      before = readCpuSeconds(roles);
      const result = await run();
      after = readCpuSeconds(roles);
      return result;
    },
    per: (operations: number): CpuPerOperation => cpuPerOperation(before, after, operations),
  };
}
