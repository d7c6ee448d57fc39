// The same incident, met again a few minutes later, in another order, under other pod names, beside
// unrelated healthy data, gets the same answer: a property over every scenario's committed bundle. Each
// case is a seed (PES_INVARIANCE_SEED=<n> runs that one alone, PES_INVARIANCE_RUNS=<n> runs more); a
// failure prints its seed, what it changed, and the two verdicts side by side.
import { readdirSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { EvidenceBundle, ExpectedVerdict } from "@pes/contracts";
import { describe, expect, it } from "vitest";
import { gistOf, perturbBundle, renamedGist, seededRandom, sideBySide, type VerdictGist } from "./bundle-perturbations.js";
import { BUNDLE_VARIANTS } from "./bundle-variants.js";
import { BUNDLES_DIR } from "./evidence-bundles.js";

/** Every committed bundle, by name. */
const NAMES = readdirSync(BUNDLES_DIR)
  .flatMap((file) => (file.endsWith(".bundle.json") ? [file.slice(0, -".bundle.json".length)] : []))
  .sort();
const RUNS = Number(process.env.PES_INVARIANCE_RUNS ?? 24);
const ONLY_SEED = process.env.PES_INVARIANCE_SEED === undefined ? undefined : Number(process.env.PES_INVARIANCE_SEED);

/** Each committed bundle with its expected verdict, then each variant (bundle-variants.ts). */
const CASES: ReadonlyArray<{ name: string; load(): Promise<{ bundle: EvidenceBundle; expected: ExpectedVerdict }> }> = [
  ...NAMES.map((name) => ({
    name,
    async load() {
      const read = async (file: string) => JSON.parse(await readFile(join(BUNDLES_DIR, file), "utf8")) as unknown;
      return { bundle: EvidenceBundle.parse(await read(`${name}.bundle.json`)), expected: ExpectedVerdict.parse(await read(`${name}.expected.json`)) };
    },
  })),
  ...BUNDLE_VARIANTS.map((variant) => ({ name: variant.name, load: async () => ({ bundle: await variant.build(), expected: variant.expected }) })),
];

/** Whether a gist is the expected verdict: a cause's subject is checked only when the expected one names it, as `pes eval` does. */
function matchesExpected(gist: VerdictGist, expected: ExpectedVerdict): boolean {
  const fits = (got: string | undefined, cause: ExpectedVerdict["cause"]) =>
    cause === undefined
      ? got === undefined
      : got !== undefined && (cause.subject === undefined ? got.split(" ")[0] === cause.kind : got === `${cause.kind} ${cause.subject}`);
  return (
    gist.conclusion === expected.conclusion &&
    fits(gist.cause, expected.cause) &&
    fits(gist.alternative, expected.alternative) &&
    JSON.stringify(gist.mitigations) === JSON.stringify(expected.mitigations ?? [])
  );
}

describe.each(CASES)("the $name bundle, met again", ({ name, load }) => {
  it("reaches its expected verdict through the engine's two looks", async () => {
    const { bundle, expected } = await load();
    const gist = await gistOf(bundle);
    expect(matchesExpected(gist, expected), JSON.stringify({ gist, expected }, null, 2)).toBe(true);
  });

  it("reaches it whenever it is paged, in whatever order its data comes, whatever its pods are called", async () => {
    const { bundle } = await load();
    const unperturbed = await gistOf(bundle);
    const seeds = ONLY_SEED === undefined ? Array.from({ length: RUNS }, (_, index) => index + 1) : [ONLY_SEED];
    const failures: string[] = [];
    for (const seed of seeds) {
      const perturbed = perturbBundle(bundle, seededRandom(seed * 7919 + name.length));
      const want = renamedGist(unperturbed, perturbed.renamed);
      const got = await gistOf(perturbed.bundle);
      if (JSON.stringify(got) !== JSON.stringify(want)) {
        failures.push(`seed ${seed} (${perturbed.applied.join(", ")}):\n${sideBySide(want, got, ["as recorded", "perturbed"])}`);
      }
    }
    if (failures.length > 0) expect.fail(`${failures.length} of ${seeds.length} seeds moved the verdict:\n\n${failures.join("\n\n")}`);
  });
});
