import { trace } from "@opentelemetry/api";
import { describe, expect, it } from "vitest";
import { startTracing, TracingConfigError, tracingSettings } from "./index.js";

describe("tracingSettings", () => {
  it("is off without OTEL_* variables, so that nothing is sent anywhere unasked", () => {
    expect(tracingSettings({})).toEqual({ enabled: false });
  });

  it("is on with an OTLP endpoint, with the specification's default protocol", () => {
    expect(tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" })).toEqual({
      enabled: true,
      exporter: "otlp",
      protocol: "http/protobuf",
    });
    expect(tracingSettings({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://collector:4318/v1/traces", OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" })).toEqual({
      enabled: true,
      exporter: "otlp",
      protocol: "http/json",
    });
  });

  it("is on when OTEL_TRACES_EXPORTER names an exporter, off for none or OTEL_SDK_DISABLED", () => {
    expect(tracingSettings({ OTEL_TRACES_EXPORTER: "console" })).toMatchObject({ enabled: true, exporter: "console" });
    expect(tracingSettings({ OTEL_TRACES_EXPORTER: "none", OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" })).toEqual({ enabled: false });
    expect(tracingSettings({ OTEL_SDK_DISABLED: "true", OTEL_TRACES_EXPORTER: "otlp" })).toEqual({ enabled: false });
  });

  it("names the variable whose value it cannot use", () => {
    expect(() => tracingSettings({ OTEL_TRACES_EXPORTER: "zipkin" })).toThrow(TracingConfigError);
    expect(() => tracingSettings({ OTEL_TRACES_EXPORTER: "otlp", OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" })).toThrow(/OTEL_EXPORTER_OTLP_PROTOCOL=grpc/);
  });
});

describe("startTracing when off", () => {
  it("registers nothing: tracers stay the API's no-op and record nothing", async () => {
    const tracing = await startTracing("test", {});
    expect(tracing.enabled).toBe(false);
    const span = trace.getTracer("test").startSpan("nothing");
    expect(span.isRecording()).toBe(false);
    expect(trace.isSpanContextValid(span.spanContext())).toBe(false);
    span.end();
  });
});
