import type { AnswerTriple } from "./labels.js";

/**
 * The benchmark's outcome scores, ported from cloudops_agent/evaluation.py (`normalize_text`,
 * `compare_prediction`, `score_predictions`): a prediction matches fully when its taxonomy, object and
 * root cause all equal the answer's, partially when its object and root cause do (the taxonomy is an
 * auxiliary field there); each compared after `str(value).strip().lower()`, a missing one as "". Only
 * the first three predictions count. A@1 and partial A@1 look at the first, A@3 and partial A@3 at any.
 */
export interface OutcomeScores {
  a1: number;
  a3: number;
  partial_a1: number;
  partial_a3: number;
}

/** evaluation.py `normalize_text`: None → "", else `str(value).strip().lower()`. */
export function normalizeText(value: unknown): string {
  if (value === undefined || value === null) return "";
  return String(value).trim().toLowerCase();
}

type Answer = Partial<Record<keyof AnswerTriple, unknown>>;

/** evaluation.py `compare_prediction`: [full match, partial match]. */
export function comparePrediction(prediction: Answer | null, truth: Answer): [boolean, boolean] {
  const predicted = prediction ?? {};
  const tax = normalizeText(predicted.fault_taxonomy) === normalizeText(truth.fault_taxonomy);
  const object = normalizeText(predicted.fault_object) === normalizeText(truth.fault_object);
  const root = normalizeText(predicted.root_cause) === normalizeText(truth.root_cause);
  return [tax && object && root, object && root];
}

/**
 * evaluation.py `score_predictions` (and `evaluate_case`: no prediction scores 0 everywhere). A `null`
 * prediction (a cause that maps to no label) compares as an empty one, as an empty dict does there.
 */
export function scorePredictions(predictions: ReadonlyArray<Answer | null>, truth: Answer): OutcomeScores {
  const scores: OutcomeScores = { a1: 0, a3: 0, partial_a1: 0, partial_a3: 0 };
  predictions.slice(0, 3).forEach((prediction, index) => {
    const [full, partial] = comparePrediction(prediction, truth);
    if (full) {
      if (index === 0) scores.a1 = 1;
      scores.a3 = 1;
    }
    if (partial) {
      if (index === 0) scores.partial_a1 = 1;
      scores.partial_a3 = 1;
    }
  });
  return scores;
}

/** evaluation.py `summarize`: each score's mean over all cases, rounded to four decimals (0 for no case). */
export function averageScores(scores: readonly OutcomeScores[]): OutcomeScores {
  const mean = (key: keyof OutcomeScores) =>
    scores.length === 0 ? 0 : Math.round((scores.reduce((sum, score) => sum + score[key], 0) / scores.length) * 10_000) / 10_000;
  return { a1: mean("a1"), a3: mean("a3"), partial_a1: mean("partial_a1"), partial_a3: mean("partial_a3") };
}

/** Which fields of the first prediction equal the answer's (ours, not evaluation.py's: to see which part is wrong). */
export interface FieldMatches {
  taxonomy: boolean;
  object: boolean;
  rootCause: boolean;
}

export function topFieldMatches(predictions: ReadonlyArray<Answer | null>, truth: Answer): FieldMatches {
  const top = predictions[0] ?? {};
  return {
    taxonomy: normalizeText(top.fault_taxonomy) === normalizeText(truth.fault_taxonomy),
    object: normalizeText(top.fault_object) === normalizeText(truth.fault_object),
    rootCause: normalizeText(top.root_cause) === normalizeText(truth.root_cause),
  };
}
