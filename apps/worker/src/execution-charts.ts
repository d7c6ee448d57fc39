import type { ChartData, PlaybookExecutionResult, Verdict } from "@pes/contracts";
import type { Investigation } from "@pes/engine";
import type { ChartStore } from "@pes/executions";
import type { Logger } from "@pes/logger";
import { absolute, chartPath, executionLinks, type LinkSettings, type LinkSigning } from "@pes/signed-links";

/** Where an execution's charts are kept and how its result links them. */
export interface ChartSettings {
  store: Pick<ChartStore, "keep">;
  /** EXECUTION_RETENTION_SECONDS: the charts live as long as the execution's record. */
  retentionMs: number;
  /** PUBLIC_URL: chart links are absolute under it; without it, paths on the API. */
  publicUrl?: string;
  /** With `publicUrl`, signed links to the page (and, for others, the chart images); none: no `pageUrl`. */
  signing?: LinkSigning;
}

/** What signed links are made with: PUBLIC_URL and the signing, when both are set. */
export function signedLinkSettings(settings: ChartSettings | undefined): LinkSettings | undefined {
  if (settings?.publicUrl === undefined || settings.signing === undefined) return undefined;
  return { ...settings.signing, publicUrl: settings.publicUrl };
}

/** The execution whose charts are kept. */
export interface ChartedExecution {
  orgId: string;
  executionId: string;
  requestId: string;
  /** The caller's deadline (epoch ms): the record lives until then and the retention after. */
  deadline: number;
}

/**
 * Keeps an execution's chart data (one SET, only when there is something to draw) for as long as its
 * record, and links it from the result: `chartUrl` on each drawn action, `pageUrl` (signed) when the
 * service signs links. A chart store that fails is logged and its charts left unlinked: the result stands.
 */
export async function keepCharts(
  settings: ChartSettings | undefined,
  execution: ChartedExecution,
  investigation: Investigation,
  logger: Logger,
): Promise<PlaybookExecutionResult> {
  const { result, charts } = investigation;
  if (settings === undefined || (result.error !== undefined && result.highlights === undefined)) return result;
  let kept = charts.size > 0;
  if (kept) {
    // The record lives until the deadline, then the retention once finished: never shorter than it.
    const ttlMs = settings.retentionMs + Math.max(0, execution.deadline - Date.now());
    try {
      await settings.store.keep(execution.orgId, execution.executionId, charts, ttlMs);
    } catch (error) {
      kept = false;
      logger.warn({ err: error, requestId: execution.requestId, charts: charts.size }, "could not keep the execution's charts; the result does not link them");
    }
  }
  const linked: PlaybookExecutionResult = { ...result };
  if (kept && result.actionResults !== undefined) {
    linked.actionResults = result.actionResults.map((action, index) => {
      if (!charts.has(index)) return action;
      const path = chartPath(execution.executionId, index);
      return { ...action, chartUrl: settings.publicUrl === undefined ? path : absolute(settings.publicUrl, path) };
    });
  }
  const links = signedLinkSettings(settings);
  if (links !== undefined) {
    linked.pageUrl = executionLinks(links, { executionId: execution.executionId, orgId: execution.orgId, result: linked }).pageUrl;
  }
  return linked;
}

/**
 * The charts of the findings the bottom line cites (the likely cause, the other candidate, the symptoms,
 * in that order), by action index: those drawn, each once, at most `max`.
 */
export function citedCharts(result: PlaybookExecutionResult, charts: ReadonlyMap<number, ChartData>, max: number): Array<[number, ChartData]> {
  const { verdict } = result;
  if (verdict === undefined) return [];
  const titles = citedActions(verdict);
  const actions = result.actionResults ?? [];
  const cited: Array<[number, ChartData]> = [];
  for (const title of titles) {
    const index = actions.findIndex((action, at) => action.title === title && charts.has(at));
    const chart = charts.get(index);
    if (chart === undefined || cited.some(([at]) => at === index)) continue;
    cited.push([index, chart]);
    if (cited.length === max) break;
  }
  return cited;
}

function citedActions(verdict: Verdict): string[] {
  return [
    ...(verdict.cause === undefined ? [] : [verdict.cause.action]),
    ...(verdict.alternative === undefined ? [] : [verdict.alternative.action]),
    ...verdict.symptoms.map((symptom) => symptom.action),
  ];
}
