import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Span } from "@opentelemetry/api";
import { SpanAttributes } from "@pes/tracing";

/**
 * A job carries its producer span's W3C trace context (`traceparent`) so that the worker's spans join the
 * trace of the request that enqueued it. With tracing off (no SDK registered) the tracer is the API's
 * no-op and the propagator injects nothing: jobs carry no `traceparent` and no span is recorded.
 */
const tracer = trace.getTracer("@pes/jobs");

/** The producer span of one job, and the trace context the job carries (none when tracing is off). */
export interface EnqueueSpan {
  readonly traceparent: string | undefined;
  /** Ends the span, as failed when `error` is given. */
  end(error?: unknown): void;
}

/** Starts the producer span of a job about to be added, as a child of the active span (the HTTP request's). */
export function startEnqueueSpan(queue: string, jobId: string, requestId: string): EnqueueSpan {
  const span = tracer.startSpan(`send ${queue}`, {
    kind: SpanKind.PRODUCER,
    attributes: messagingAttributes(queue, jobId, requestId, "send"),
  });
  const carrier: { traceparent?: string } = {};
  propagation.inject(trace.setSpan(context.active(), span), carrier);
  return {
    traceparent: carrier.traceparent,
    end(error) {
      if (error !== undefined) failed(span, error);
      span.end();
    },
  };
}

/**
 * Runs a job in its consumer span, a child of the span whose context the job carries (else a trace of its
 * own); every span the handler starts (actions, their requests) is a child of it.
 */
export async function inJobSpan<T>(queue: string, job: { id?: string | undefined; name: string; data: unknown }, run: () => Promise<T>): Promise<T> {
  const { traceparent, requestId } = traceFieldsOf(job.data);
  const parent = traceparent === undefined ? ROOT_CONTEXT : propagation.extract(ROOT_CONTEXT, { traceparent });
  const span = tracer.startSpan(
    `process ${queue}`,
    { kind: SpanKind.CONSUMER, attributes: { ...messagingAttributes(queue, job.id, requestId, "process"), "messaging.operation.name": job.name } },
    parent,
  );
  try {
    return await context.with(trace.setSpan(parent, span), run);
  } catch (error) {
    failed(span, error);
    throw error;
  } finally {
    span.end();
  }
}

function messagingAttributes(queue: string, jobId: string | undefined, requestId: string | undefined, operation: "send" | "process") {
  return {
    "messaging.system": "bullmq",
    "messaging.destination.name": queue,
    "messaging.operation.type": operation,
    ...(jobId === undefined ? {} : { "messaging.message.id": jobId }),
    ...(requestId === undefined ? {} : { [SpanAttributes.requestId]: requestId }),
  };
}

/** The error's class only: messages can quote data-source answers, which do not belong in a trace. */
function failed(span: Span, error: unknown): void {
  span.setStatus({ code: SpanStatusCode.ERROR });
  span.setAttribute("error.type", error instanceof Error ? error.name : typeof error);
}

/** Read without the job's schema (like the caller's reply address), so that any job type can carry them. */
function traceFieldsOf(data: unknown): { traceparent?: string; requestId?: string } {
  if (typeof data !== "object" || data === null) return {};
  const traceparent = "traceparent" in data && typeof data.traceparent === "string" ? data.traceparent : undefined;
  const requestId = "requestId" in data && typeof data.requestId === "string" ? data.requestId : undefined;
  return { ...(traceparent === undefined ? {} : { traceparent }), ...(requestId === undefined ? {} : { requestId }) };
}
