/**
 * `npm run bench:profile -- <file.cpuprofile>…`
 *
 * Where the API's and the workers' CPU goes, by part of the service, from V8 CPU profiles of them under
 * load: for instance those `npm run bench:compare -- --baseline=. --rounds=2
 * --node-args="--cpu-prof --cpu-prof-dir=/tmp/prof"` leaves in /tmp/prof for the candidate's API and
 * workers. Profiles of one role (told by the entry point they ran) are pooled; see profile-shares.ts for
 * how a sample is charged.
 */
import { readFileSync } from "node:fs";
import { type CpuProfile, type ProfileShares, profileShares } from "./profile-shares.js";

const files = process.argv.slice(2).filter((arg) => arg !== "--");
if (files.length === 0) {
  process.stderr.write("usage: npm run bench:profile -- <file.cpuprofile>…\n");
  process.exit(2);
}

const byRole = new Map<ProfileShares["role"], { profiles: number; busyMs: number; partMs: Map<string, number> }>();
for (const file of files) {
  const { role, busyMs, partMs } = profileShares(JSON.parse(readFileSync(file, "utf8")) as CpuProfile);
  const pooled = byRole.get(role) ?? { profiles: 0, busyMs: 0, partMs: new Map<string, number>() };
  pooled.profiles += 1;
  pooled.busyMs += busyMs;
  for (const [part, ms] of partMs) pooled.partMs.set(part, (pooled.partMs.get(part) ?? 0) + ms);
  byRole.set(role, pooled);
}

for (const [role, { profiles, busyMs, partMs }] of byRole) {
  process.stdout.write(`\n${role}: ${profiles} profile(s), ${(busyMs / 1000).toFixed(1)} s busy\n\n| Part | Share of busy CPU |\n|---|---|\n`);
  for (const [part, ms] of [...partMs].sort((a, b) => b[1] - a[1])) {
    if (ms / busyMs >= 0.001) process.stdout.write(`| ${part} | ${((100 * ms) / busyMs).toFixed(1)} % |\n`);
  }
}
