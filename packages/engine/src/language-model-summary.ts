import { shortAnswer, type Evidence, type Finding, type Judgement } from "@pes/analysis";
import { budgetStopReason, type ExecutionAnalysis } from "@pes/contracts";
import type { Logger } from "@pes/logger";
import type { BudgetMeter } from "./execution-budget.js";

/** An OpenAI-compatible chat-completions endpoint (LLM_BASE_URL, LLM_MODEL, LLM_API_KEY, LLM_TIMEOUT_MS). */
export interface LanguageModelOptions {
  /** The API's base, e.g. `https://api.openai.com/v1`: requests go to `<baseUrl>/chat/completions`. */
  baseUrl: string;
  model: string;
  /** Sent as `Authorization: Bearer …`; never logged, never in a result. */
  apiKey?: string;
  /** How long the one pass may take; past it the deterministic text is used. */
  timeoutMs: number;
}

export interface LanguageModelInput {
  attributes: Readonly<Record<string, string>>;
  findings: readonly Finding[];
  /** What the rules concluded: the model is told it and rewords it; the verdict in the result stays this one. */
  judgement: Judgement;
  /** The deterministic bottom line: the model rewrites it, and it stands whenever the model's does not. */
  deterministic: string;
}

export interface LanguageModelSummary {
  highlights: string;
  analysis: ExecutionAnalysis;
}

/** What the pass takes of an execution's budget: its model tokens. */
export type ModelTokenBudget = Pick<BudgetMeter, "modelTokensLeft" | "spendModelTokens" | "stopped">;

/**
 * Characters per token, to estimate a prompt's tokens before asking: about 4 for English prose, fewer for
 * the titles, numbers and JSON a prompt holds here; 3 errs on the side of asking less.
 */
const CHARS_PER_TOKEN = 3;

/** Findings put in the prompt at most (symptoms and the likely cause first), and characters in all. */
const MAX_PROMPT_FINDINGS = 60;
const MAX_PROMPT_CHARS = 24_000;
/** The longest summary taken from the model: the deterministic one is rarely longer. */
const MAX_SUMMARY_CHARS = 3_000;
/** The model's answer is read up to this size; a longer one is not a summary. */
const MAX_ANSWER_BYTES = 256 * 1024;
/** A citation as the summary writes it: the action's title in square brackets. */
const CITATION = /\[([^\][]+)\]/g;

const SYSTEM_PROMPT = `You write the bottom line of an incident investigation for an on-call engineer.
You get the findings of the investigation's actions (each with its action title) and a draft bottom line made
by rules, with the rules' verdict as JSON. Rewrite the draft as a short, plain summary (at most 6 sentences):
the likely cause if the verdict names one (both candidates when its conclusion is "ambiguous"), the symptoms,
what was checked and found normal. Do not name another cause than the verdict's, and never a cause when its
conclusion is "no-cause". Every claim must cite the action it comes from by its exact
title in square brackets, e.g. "Errors rose 7x after the deploy [Rollouts of checkout]". Use only titles
from the findings. Answer with one JSON object and nothing else: {"summary": "...", "citations": ["<title>", ...]}.`;

/**
 * One optional pass of a language model over an execution's findings: it rewrites the deterministic
 * bottom line, and its text is used only when it checks out: JSON with a summary that cites, in square
 * brackets, only titles of actions that ran (not those skipped), and lists them as its citations. It
 * rewrites words only: the verdict is the rules' and stays in the result whatever the model answers. A model that is slow,
 * fails, answers anything else or cites an unknown action leaves the deterministic text in place. With
 * nothing abnormal found, the model is not asked: the deterministic text is complete, and a model could
 * only add a cause that is not there. Token counts and latency are logged and returned (`analysis`).
 * With a token `budget`, the model is asked only when the prompt's estimate leaves room for an answer,
 * which is cut at what is left (`max_tokens`); what it used is spent from the budget.
 */
export async function summarizeWithLanguageModel(
  options: LanguageModelOptions,
  input: LanguageModelInput,
  logger: Logger,
  signal?: AbortSignal,
  budget?: ModelTokenBudget,
): Promise<LanguageModelSummary> {
  const { model } = options;
  if (input.judgement.verdict.symptoms.length === 0) {
    return { highlights: input.deterministic, analysis: { by: "deterministic", model, fallback: "nothing abnormal found: the model was not asked" } };
  }
  // An action that was not run found nothing to cite.
  const titles = new Set(input.findings.flatMap(({ evidence }) => (evidence.kind === "skipped" ? [] : [evidence.action])));
  const prompt = promptOf(input);
  // With a token budget: the prompt's estimate must leave room for an answer, which may take the rest.
  const left = budget?.modelTokensLeft();
  const estimate = Math.ceil((SYSTEM_PROMPT.length + prompt.length) / CHARS_PER_TOKEN);
  if (left !== undefined && estimate >= left) {
    budget?.stopped("model-tokens");
    return { highlights: input.deterministic, analysis: { by: "deterministic", model, fallback: budgetStopReason("model-tokens") } };
  }
  const startedAt = performance.now();
  const outcome = await askModel(options, prompt, signal, left === undefined ? undefined : left - estimate);
  const latencyMs = Math.round(performance.now() - startedAt);
  const usage = outcome.kind === "answer" ? outcome.usage : {};
  if (outcome.kind === "answer") budget?.spendModelTokens(spentTokens(usage, estimate));
  const cut = outcome.kind === "answer" && outcome.cut && left !== undefined;
  if (cut) budget?.stopped("model-tokens");
  const checked = cut
    ? { kind: "failed" as const, reason: budgetStopReason("model-tokens") }
    : outcome.kind === "answer"
      ? checkSummary(outcome.content, titles)
      : outcome;
  const analysis: ExecutionAnalysis =
    checked.kind === "summary"
      ? { by: "language-model", model, latencyMs, ...usage }
      : { by: "deterministic", model, latencyMs, ...usage, fallback: checked.reason };
  logger.info(
    { model, latencyMs, ...usage, by: analysis.by, ...(analysis.fallback === undefined ? {} : { fallback: analysis.fallback }) },
    "language-model pass",
  );
  return { highlights: checked.kind === "summary" ? checked.summary : input.deterministic, analysis };
}

/** What the model answered: `cut` when it stopped at `max_tokens` (`finish_reason: "length"`). */
type Outcome =
  | { kind: "answer"; content: string; usage: { promptTokens?: number; completionTokens?: number }; cut: boolean }
  | { kind: "failed"; reason: string };

/** The tokens an answer used, as its usage says; the prompt's estimate where it says nothing. */
function spentTokens(usage: { promptTokens?: number; completionTokens?: number }, estimate: number): number {
  return (usage.promptTokens ?? estimate) + (usage.completionTokens ?? 0);
}

/**
 * One chat-completions request within the deadline, its answer cut at `maxTokens` when given; never
 * throws, never quotes the answer's body on an error.
 */
async function askModel(options: LanguageModelOptions, prompt: string, outer: AbortSignal | undefined, maxTokens?: number): Promise<Outcome> {
  const timeout = AbortSignal.timeout(options.timeoutMs);
  const signal = outer === undefined ? timeout : AbortSignal.any([timeout, outer]);
  try {
    const response = await fetch(`${options.baseUrl.replace(/\/+$/, "")}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", ...(options.apiKey === undefined ? {} : { authorization: `Bearer ${options.apiKey}` }) },
      body: JSON.stringify({
        model: options.model,
        temperature: 0,
        ...(maxTokens === undefined ? {} : { max_tokens: maxTokens }),
        messages: [
          { role: "system", content: SYSTEM_PROMPT },
          { role: "user", content: prompt },
        ],
      }),
      signal,
    });
    // An error body may echo the request, the key included: only the status is kept.
    if (!response.ok) return { kind: "failed", reason: `the model answered HTTP ${response.status}` };
    const text = await response.text();
    if (text.length > MAX_ANSWER_BYTES) return { kind: "failed", reason: "the model's answer is too large" };
    return readCompletion(text);
  } catch {
    if (timeout.aborted) return { kind: "failed", reason: `no answer within ${options.timeoutMs} ms` };
    if (outer?.aborted) return { kind: "failed", reason: "cancelled" };
    return { kind: "failed", reason: "could not reach the model" };
  }
}

/** `choices[0].message.content` and `usage` of a chat-completions answer. */
function readCompletion(text: string): Outcome {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return { kind: "failed", reason: "the model's answer is not JSON" };
  }
  const content = field(body, "choices", 0, "message", "content");
  if (typeof content !== "string") return { kind: "failed", reason: "the model's answer has no choices[0].message.content" };
  const promptTokens = field(body, "usage", "prompt_tokens");
  const completionTokens = field(body, "usage", "completion_tokens");
  return {
    kind: "answer",
    content,
    cut: field(body, "choices", 0, "finish_reason") === "length",
    usage: {
      ...(isCount(promptTokens) ? { promptTokens } : {}),
      ...(isCount(completionTokens) ? { completionTokens } : {}),
    },
  };
}

/**
 * The model's summary, if it checks out: a JSON object (a ```json fence allowed) with a non-empty
 * `summary` of at most MAX_SUMMARY_CHARS and `citations`; every title the summary cites in square
 * brackets and every listed citation is a title of an action that ran; it cites at least one, and lists
 * what it cites.
 */
export function checkSummary(content: string, titles: ReadonlySet<string>): { kind: "summary"; summary: string } | { kind: "failed"; reason: string } {
  const failed = (reason: string) => ({ kind: "failed" as const, reason });
  let answer: unknown;
  try {
    answer = JSON.parse(content.trim().replace(/^```(?:json)?\s*|\s*```$/g, ""));
  } catch {
    return failed("the model's summary is not the JSON asked for");
  }
  const summary = field(answer, "summary");
  const citations = field(answer, "citations");
  if (typeof summary !== "string" || summary.trim() === "") return failed("the model's answer has no summary");
  if (summary.length > MAX_SUMMARY_CHARS) return failed("the model's summary is too long");
  if (!Array.isArray(citations) || !citations.every((citation) => typeof citation === "string")) return failed("the model's answer has no list of citations");
  const cited = [...summary.matchAll(CITATION)].map((match) => match[1] ?? "");
  const unknown = [...cited, ...citations].find((title) => !titles.has(title));
  if (unknown !== undefined) return failed(`the model cited an action that did not run: "${unknown.slice(0, 80)}"`);
  if (cited.length === 0) return failed("the model's summary cites no action");
  if (cited.some((title) => !citations.includes(title))) return failed("the model's citations do not list what its summary cites");
  return { kind: "summary", summary: summary.trim() };
}

/**
 * The prompt: the issue, the draft, the verdict, and the findings as lines `[title] (gadget) role: short
 * answer`, the likely cause and the symptoms first, cut to MAX_PROMPT_FINDINGS and MAX_PROMPT_CHARS.
 */
function promptOf(input: LanguageModelInput): string {
  const { ranking, time, verdict } = input.judgement;
  // Rankings copy findings into new objects; the evidence is the same object.
  const first = new Set<Evidence>(
    [...(ranking.likelyCause === undefined ? [] : [ranking.likelyCause.finding]), ...ranking.symptoms].map(({ evidence }) => evidence),
  );
  const ordered = [...input.findings.filter(({ evidence }) => first.has(evidence)), ...input.findings.filter(({ evidence }) => !first.has(evidence))];
  const lines: string[] = [];
  let chars = 0;
  for (const finding of ordered.slice(0, MAX_PROMPT_FINDINGS)) {
    const line = `- [${finding.evidence.action}] (${finding.gadget}) ${finding.evidence.kind}: ${shortAnswer(finding.evidence, time)}`;
    if (chars + line.length > MAX_PROMPT_CHARS) break;
    lines.push(line);
    chars += line.length;
  }
  const attributes = Object.entries(input.attributes)
    .map(([name, value]) => `${name}=${value.slice(0, 100)}`)
    .join(", ");
  return [
    `Issue time: ${time.toISOString()}${attributes === "" ? "" : `; attributes: ${attributes.slice(0, 500)}`}`,
    `Draft bottom line: ${input.deterministic.slice(0, 4_000)}`,
    `Verdict: ${verdictLine(verdict)}`,
    `Findings (${lines.length} of ${input.findings.length}):`,
    ...lines,
  ].join("\n");
}

/** The verdict's decision for the prompt: its conclusion and candidates, without the lists the findings repeat. */
function verdictLine(verdict: Judgement["verdict"]): string {
  const { conclusion, cause, alternative } = verdict;
  return JSON.stringify({ conclusion, ...(cause === undefined ? {} : { cause }), ...(alternative === undefined ? {} : { alternative }) }).slice(0, 2_000);
}

function isCount(value: unknown): value is number {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0;
}

function field(value: unknown, ...path: (string | number)[]): unknown {
  let current = value;
  for (const step of path) {
    if (current === null || typeof current !== "object") return undefined;
    current = (current as Record<string | number, unknown>)[step];
  }
  return current;
}
