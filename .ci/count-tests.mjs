// Adds up the per-package "Tests  N passed | M failed" lines of a `npm test` log (turbo + vitest) and
// prints them as one plain closing line, "N passed, M failed".
import { readFileSync } from "node:fs";
import { stripVTControlCharacters } from "node:util";

const text = stripVTControlCharacters(readFileSync(process.argv[2] ?? 0, "utf8"));
let passed = 0;
let failed = 0;
for (const line of text.split("\n")) {
  if (!/^\S+:test:\s+Tests\s/.test(line)) continue;
  passed += Number(/(\d+) passed/.exec(line)?.[1] ?? 0);
  failed += Number(/(\d+) failed/.exec(line)?.[1] ?? 0);
}
process.stdout.write(`${passed} passed, ${failed} failed\n`);
