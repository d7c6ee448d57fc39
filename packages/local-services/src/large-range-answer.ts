/** The last sample's time (Unix seconds) of `largeRangeAnswer`: an issue time near it sees the jump. */
export const LARGE_ANSWER_END = 1_763_650_800;
const STEP_SECONDS = 15;
/** Bytes one `[t,"v"]` sample takes in the answer, for sizing it. */
const BYTES_PER_SAMPLE = 23;

/**
 * A Prometheus range answer (`query_range`) of about `mib` MiB with `seriesCount` series whose latency
 * jumps 4× in the last tenth, in the shape and number format Prometheus writes: what the memory tests
 * hand a worker or a connector.
 */
export function largeRangeAnswer(mib: number, seriesCount: number): Buffer {
  const points = Math.floor((mib * 1024 * 1024) / seriesCount / BYTES_PER_SAMPLE);
  const parts = ['{"status":"success","data":{"resultType":"matrix","result":['];
  for (let s = 0; s < seriesCount; s += 1) {
    const metric = {
      __name__: "http_request_duration_seconds",
      instance: `10.0.${s % 250}.${s % 199}:9100`,
      job: "api",
      pod: `checkout-${String(s).padStart(5, "0")}`,
    };
    const values: string[] = [];
    for (let i = 0; i < points; i += 1) {
      const value = 0.4 + ((s * 7 + i * 13) % 100) / 1000 + (i > points * 0.9 ? 1.4 : 0);
      values.push(`[${LARGE_ANSWER_END - (points - i) * STEP_SECONDS},"${value.toFixed(5)}"]`);
    }
    parts.push(`${s === 0 ? "" : ","}{"metric":${JSON.stringify(metric)},"values":[${values.join(",")}]}`);
  }
  parts.push("]}}");
  return Buffer.from(parts.join(""));
}
