import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { replayBundle } from "@pes/analysis";
import type { Verdict } from "@pes/contracts";
import { type ConvertedCase, convertCase, emptyBundle } from "./case-bundle.js";
import { type AnswerTriple, predictionsOf } from "./labels.js";
import { type FieldMatches, type OutcomeScores, scorePredictions, topFieldMatches } from "./scoring.js";

/** One case of a system: `<category>/<n>`, under `<checkout>/benchmark/<system>/`. */
export interface CaseRef {
  id: string;
  category: string;
  directory: string;
}

/** The cases of a system, by category then number; `only` (`<category>/<n>`) picks one. */
export function listCases(checkout: string, system: string, only?: string): CaseRef[] {
  const root = join(checkout, "benchmark", system);
  if (!existsSync(root)) throw new Error(`no benchmark/${system} under ${checkout}`);
  const cases: CaseRef[] = [];
  for (const category of readdirSync(root, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort()) {
    const numbers = readdirSync(join(root, category), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name)
      .sort((a, b) => Number(a) - Number(b) || a.localeCompare(b));
    for (const number of numbers) cases.push({ id: `${category}/${number}`, category, directory: join(root, category, number) });
  }
  if (only === undefined) return cases;
  const picked = cases.filter((candidate) => candidate.id === only);
  if (picked.length === 0) throw new Error(`no case ${only} in benchmark/${system}`);
  return picked;
}

/** What a case gave: its predictions, their scores against the answer, and the time each step took. */
export interface CaseResult {
  id: string;
  category: string;
  predictions: Array<AnswerTriple | null>;
  conclusion: Verdict["conclusion"];
  confidence?: "high" | "medium" | "low";
  /** Absent when the case has no answer (metadata.json `result`). */
  scores?: OutcomeScores;
  /** Which fields of the top prediction are right; absent with the answer. */
  fields?: FieldMatches;
  /** Milliseconds to convert the case directory into a bundle. */
  convertMs: number;
  /** Milliseconds of the analysis of the bundle (`replayBundle`). */
  analysisMs: number;
  notes: string[];
}

function readAnswer(directory: string): Partial<AnswerTriple> | undefined {
  const path = join(directory, "metadata.json");
  if (!existsSync(path)) return undefined;
  const metadata: unknown = JSON.parse(readFileSync(path, "utf8"));
  if (typeof metadata !== "object" || metadata === null || !("result" in metadata)) return undefined;
  const { result } = metadata;
  return typeof result === "object" && result !== null ? result : undefined;
}

/**
 * Converts a case, replays its bundle through the analysis, maps the verdict to the benchmark's answers
 * and scores them. With `dumpDir`, the bundle is written to `<dumpDir>/<category>/<n>.json`.
 */
export function runCase(ref: CaseRef, options: { dumpDir?: string; system: string; apiOnly?: boolean }): CaseResult {
  const convertStart = performance.now();
  const id = `cloud-opsbench/${options.system}/${ref.id}`;
  let converted: ConvertedCase;
  try {
    converted = convertCase(ref.directory, id, { apiOnly: options.apiOnly === true });
  } catch (error) {
    // A case that cannot be read is scored like any other: a miss, with why in its notes.
    converted = { bundle: emptyBundle(id), notes: [`not converted: ${error instanceof Error ? error.message : String(error)}`] };
  }
  const { bundle, notes } = converted;
  const convertMs = performance.now() - convertStart;
  if (options.dumpDir !== undefined) {
    const path = join(options.dumpDir, `${ref.id}.json`);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, `${JSON.stringify(bundle, null, 1)}\n`);
  }
  const analysisStart = performance.now();
  const { verdict } = replayBundle(bundle);
  const analysisMs = performance.now() - analysisStart;
  const predictions = predictionsOf(verdict);
  // Answers are read only here, after the analysis, to score it.
  const answer = readAnswer(ref.directory);
  return {
    id: ref.id,
    category: ref.category,
    predictions,
    conclusion: verdict.conclusion,
    ...(verdict.cause === undefined ? {} : { confidence: verdict.cause.confidence }),
    ...(answer === undefined ? {} : { scores: scorePredictions(predictions, answer), fields: topFieldMatches(predictions, answer) }),
    convertMs,
    analysisMs,
    notes,
  };
}
