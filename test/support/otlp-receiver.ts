import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

/** One span as an OTLP/HTTP JSON export carries it, with its resource's service name. */
export interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  /** Empty for a root span. */
  parentSpanId: string;
  name: string;
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  attributes: Record<string, string | number | boolean>;
}

/** OTLP's AnyValue, the scalar cases. */
interface AnyValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
}
interface KeyValue {
  key: string;
  value: AnyValue;
}
/** The parts of ExportTraceServiceRequest (OTLP JSON encoding) this receiver reads. */
interface ExportTraceServiceRequest {
  resourceSpans?: {
    resource?: { attributes?: KeyValue[] };
    scopeSpans?: {
      spans?: { traceId: string; spanId: string; parentSpanId?: string; name: string; kind: number; attributes?: KeyValue[] }[];
    }[];
  }[];
}

/**
 * An OTLP/HTTP trace receiver on 127.0.0.1: `POST /v1/traces` with the JSON encoding (exporters set
 * `OTEL_EXPORTER_OTLP_PROTOCOL=http/json`), answered with an empty ExportTraceServiceResponse.
 */
export interface OtlpReceiver {
  /** The base URL, for `OTEL_EXPORTER_OTLP_ENDPOINT` (exporters append `/v1/traces`). */
  url: string;
  spans(): ReceivedSpan[];
  /** Resolves once the spans received so far satisfy `done`. */
  waitFor(done: (spans: ReceivedSpan[]) => boolean): Promise<ReceivedSpan[]>;
  close(): Promise<void>;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const received: ReceivedSpan[] = [];
  const waiters = new Set<() => void>();

  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      if (request.method !== "POST" || request.url !== "/v1/traces" || !request.headers["content-type"]?.startsWith("application/json")) {
        response.writeHead(415).end();
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as ExportTraceServiceRequest;
      for (const resourceSpans of body.resourceSpans ?? []) {
        const resource = attributesOf(resourceSpans.resource?.attributes);
        for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
          for (const span of scopeSpans.spans ?? []) {
            received.push({
              service: String(resource["service.name"]),
              traceId: span.traceId,
              spanId: span.spanId,
              parentSpanId: span.parentSpanId ?? "",
              name: span.name,
              kind: span.kind,
              attributes: attributesOf(span.attributes),
            });
          }
        }
      }
      response.writeHead(200, { "content-type": "application/json" }).end("{}");
      for (const waiter of waiters) waiter();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    spans: () => [...received],
    waitFor(done) {
      return new Promise((resolve) => {
        const check = () => {
          if (!done(received)) return;
          waiters.delete(check);
          resolve([...received]);
        };
        waiters.add(check);
        check();
      });
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function attributesOf(list: KeyValue[] | undefined): Record<string, string | number | boolean> {
  const attributes: Record<string, string | number | boolean> = {};
  for (const { key, value } of list ?? []) {
    const scalar = value.stringValue ?? value.boolValue ?? value.doubleValue ?? (value.intValue === undefined ? undefined : Number(value.intValue));
    if (scalar !== undefined) attributes[key] = scalar;
  }
  return attributes;
}
