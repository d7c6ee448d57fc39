/**
 * `node bench/dist/profile-summary.js <file.cpuprofile> [top] [--callers=<regex>] [--depth=<n>]`: prints
 * where a profiled API or worker spent its busy time (self time by function and by module, inclusive
 * time), or with --callers, which call chains pay for the functions matching the regex.
 */
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { callersOf, summarizeProfile, type CpuProfile, type HotSpot } from "./cpu-profile-summary.js";

function print(title: string, spots: readonly HotSpot[]): void {
  process.stdout.write(`\n${title}\n| busy % | ms | name |\n|---:|---:|---|\n`);
  for (const spot of spots) {
    process.stdout.write(`| ${spot.busyPercent.toFixed(1)} | ${(spot.time / 1000).toFixed(0)} | \`${spot.name}\` |\n`);
  }
}

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: { callers: { type: "string" }, depth: { type: "string", default: "4" } },
});
const [file, topArg] = positionals;
if (file === undefined) {
  process.stderr.write("usage: node bench/dist/profile-summary.js <file.cpuprofile> [top] [--callers=<regex>] [--depth=<n>]\n");
  process.exitCode = 2;
} else if (values.callers !== undefined) {
  const profile = JSON.parse(readFileSync(file, "utf8")) as CpuProfile;
  print(`Callers of /${values.callers}/ in ${file}`, callersOf(profile, new RegExp(values.callers), Number(values.depth), Number(topArg ?? "15")));
} else {
  const profile = JSON.parse(readFileSync(file, "utf8")) as CpuProfile;
  const summary = summarizeProfile(profile, Number(topArg ?? "25"));
  process.stdout.write(`# ${file}\nsampled ${summary.totalMs.toFixed(0)} ms, idle ${summary.idlePercent.toFixed(1)} %\n`);
  print("Self time by module (busy = not idle)", summary.selfByModule);
  print("Self time by function", summary.selfByFunction);
  print("Inclusive time of our own functions (apps/, packages/)", summary.totalByOwnFunction);
  print("Inclusive time of all functions", summary.totalByFunction);
}
