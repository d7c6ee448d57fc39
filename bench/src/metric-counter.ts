/**
 * The sum of a counter's samples in a Prometheus text exposition, over the series whose labels include
 * every `match` pair (`pes_jobs_total{job_name="execute"}` summed over its outcomes). The harness counts
 * executions where they happen, at the workers, and joins where they are decided, at the API.
 */
export function sumCounter(exposition: string, name: string, match: Record<string, string> = {}): number {
  let total = 0;
  for (const line of exposition.split("\n")) {
    if (!line.startsWith(name) || (line[name.length] !== "{" && line[name.length] !== " ")) continue;
    const labels = line[name.length] === "{" ? line.slice(name.length + 1, line.indexOf("}")) : "";
    if (!Object.entries(match).every(([key, value]) => labels.includes(`${key}="${value}"`))) continue;
    total += Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return total;
}

/** Reads `name` from each `/metrics` URL and adds them up (one figure across all workers). */
export async function readCounter(urls: readonly string[], name: string, match: Record<string, string> = {}): Promise<number> {
  const texts = await Promise.all(
    urls.map(async (url) => {
      const response = await fetch(url, { signal: AbortSignal.timeout(10_000) });
      if (!response.ok) throw new Error(`${url}: ${response.status}`);
      return response.text();
    }),
  );
  return texts.reduce((total, text) => total + sumCounter(text, name, match), 0);
}

/**
 * The value of an unlabelled sample (a gauge such as `nodejs_eventloop_lag_p99_seconds`) in a
 * Prometheus text exposition; NaN when it is absent, so that a missing metric never reads as 0.
 */
export function gaugeValue(exposition: string, name: string): number {
  const line = exposition.split("\n").find((candidate) => candidate.startsWith(`${name} `));
  return line === undefined
    ? Number.NaN
    : Number(
        line
          .slice(name.length + 1)
          .trim()
          .split(" ")[0],
      );
}
