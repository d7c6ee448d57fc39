import { SpanStatusCode, trace, type Context } from "@opentelemetry/api";
import type { Evidence } from "@pes/analysis";
import { SpanAttributes } from "@pes/tracing";

/** The API's no-op tracer unless the process started tracing (`@pes/tracing`): then one span per action. */
const tracer = trace.getTracer("@pes/engine");

/** What an action's span names: configuration and ids only, never the action's title, query or answer. */
export interface ActionSpanFacts {
  connectorType: string;
  dataSource: string;
  requestId: string;
}

/**
 * Runs one action in a span of its own under `parent` (the job's), so that its outbound requests are the
 * span's children. The span records the evidence's kind; a failed action is an error span, without its
 * reason, which may quote the data source's answer.
 */
export function inActionSpan<R extends { evidence: readonly Evidence[] }>(parent: Context, facts: ActionSpanFacts, run: () => Promise<R>): Promise<R> {
  return tracer.startActiveSpan(
    `action ${facts.connectorType}`,
    {
      attributes: {
        [SpanAttributes.connectorType]: facts.connectorType,
        [SpanAttributes.dataSource]: facts.dataSource,
        [SpanAttributes.requestId]: facts.requestId,
      },
    },
    parent,
    async (span) => {
      try {
        const ran = await run();
        const { evidence } = ran;
        // One kind, or the kinds of what it found ("alert,alert,change").
        span.setAttribute(SpanAttributes.actionOutcome, evidence.map((item) => item.kind).join(","));
        if (evidence.some((item) => item.kind === "failed")) span.setStatus({ code: SpanStatusCode.ERROR });
        return ran;
      } finally {
        span.end();
      }
    },
  );
}
