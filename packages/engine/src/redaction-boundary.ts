import type { Finding, Judgement } from "@pes/analysis";
import type { Redactor } from "@pes/connectors";
import type { WindowedRun } from "./run.js";

/** What judging read, unredacted: each action's run (its evidence and what it observed), the findings and the judgement. */
export interface JudgedMaterial {
  runs: readonly WindowedRun[];
  findings: readonly Finding[];
  judgement: Judgement;
}

/**
 * The redaction boundary: the one place where what data sources answered is redacted, right after the
 * verdict was judged from it and before any of it is rendered, sent, drawn or kept. Everything that leaves
 * the worker is made from what this returns: the result's texts and verdict (judge.ts renders them from
 * these findings and this judgement), the language model's prompt (from the same), the execution's
 * charts (from these runs' observations), the evidence bundle (these runs, this verdict) and the
 * execution's log lines (these findings). Copies are made once per object, so the findings and the
 * judgement's ranking still share their evidence, as the rendering expects; a large Prometheus answer is
 * redacted as it is read again, series by series, never held whole.
 */
export function redactJudged(material: JudgedMaterial, redactor: Redactor): JudgedMaterial {
  return redactor.value(material, KEPT_AS_IS);
}

/**
 * What is not a data source's answer and stays as it is: an action's link (built from the data source's
 * configured address and the issue, for a person to follow) and the filled query (the playbook's template
 * and the attributes). The observed's own redact function (its data source's secrets) is kept too.
 */
const KEPT_AS_IS: ReadonlySet<string> = new Set(["link", "query"]);
