import type { BudgetSpent, ExecutionBudget } from "@pes/contracts";
import bytes from "bytes";
import escapeHtml from "escape-html";

/** What each kind of a budget counts, as the page words it. */
const KINDS: ReadonlyArray<{ kind: string; field: keyof BudgetSpent; amount: (value: number) => string }> = [
  { kind: "queries", field: "queries", amount: (value) => `${value} ${value === 1 ? "query" : "queries"}` },
  { kind: "bytes", field: "bytes", amount: (value) => `${bytes.format(value, { unitSeparator: " " }) ?? `${value} B`} read` },
  { kind: "wall-time", field: "wallTimeMs", amount: (value) => `${value < 1_000 ? `${value} ms` : `${(value / 1_000).toFixed(1)} s`} of wall time` },
  { kind: "model-tokens", field: "modelTokens", amount: (value) => `${value} model ${value === 1 ? "token" : "tokens"}` },
];

/**
 * The page's budget section (`#budget`): what the execution spent of each kind, against its limit when it
 * has one; which limit stopped it, when one did; the queries its organization's per-minute budget refused,
 * by data source. Empty for a result without a budget (one from before budgets, or an error).
 */
export function budgetSection(budget: ExecutionBudget | undefined): string {
  if (budget === undefined) return "";
  const rows = KINDS.map(({ kind, field, amount }) => {
    const limit = budget.limit[field];
    const reached = budget.exhausted === kind;
    return `<tr${reached ? ' class="exhausted"' : ""} data-kind="${kind}"><td>${amount(budget.spent[field])}</td><td>${
      limit === undefined ? "no limit" : `limit ${amount(limit)}`
    }${reached ? " · <strong>reached: the investigation stopped here</strong>" : ""}</td></tr>`;
  });
  const refused = Object.entries(budget.refused ?? {});
  const stopped =
    budget.exhausted === undefined
      ? ""
      : `<p class="error" id="budget-exhausted">Its ${escapeHtml(budget.exhausted)} limit stopped this investigation: the actions it did not run or wait for are under “What could not be checked”, and the verdict is judged from what it had.</p>`;
  const refusals =
    refused.length === 0
      ? ""
      : `<p id="budget-refused">Queries refused by the organization's budget per minute: ${refused
          .map(([dataSource, count]) => `${escapeHtml(dataSource)} ${count}`)
          .join(", ")}.</p>`;
  return `<h2>Budget</h2>\n${stopped}<table id="budget"><thead><tr><th>Spent</th><th>Limit</th></tr></thead><tbody>${rows.join("")}</tbody></table>${refusals}`;
}
