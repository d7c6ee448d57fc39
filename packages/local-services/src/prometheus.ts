import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { findBinary, run, serveOnFreePort } from "./child-process.js";

export interface LocalPrometheus {
  /** Base URL of the HTTP API and UI, e.g. `http://127.0.0.1:41234` (no trailing slash). */
  url: string;
  /** The temporary directory holding the history and the TSDB; `stop()` removes it. */
  directory: string;
  /** Stops the process and removes its data directory. Safe to call twice. */
  stop(): Promise<void>;
}

export interface StartPrometheusOptions {
  /** The history to serve, as OpenMetrics text ending in `# EOF` (see `toOpenMetrics`). */
  openMetrics: string;
  /** How long to wait for `/-/ready`; default 30 s. */
  readyTimeoutMs?: number;
}

/**
 * Starts a real Prometheus over a synthetic history: the OpenMetrics text is backfilled into a fresh
 * TSDB with `promtool tsdb create-blocks-from openmetrics`, then `prometheus` serves it on a free
 * loopback port with no scrape jobs, so every sample it answers with is one the caller wrote.
 *
 * Checked with Debian's 2.42: blocks reaching up to the current time are accepted and queryable as soon
 * as `/-/ready` answers (no scrape jobs means nothing in the head can overlap them).
 * @throws Error when the binaries are missing, the backfill fails or Prometheus does not become ready.
 */
export async function startPrometheus(options: StartPrometheusOptions): Promise<LocalPrometheus> {
  const prometheus = await findBinary("prometheus", "prometheus");
  const promtool = await findBinary("promtool", "prometheus");
  const dir = await mkdtemp(join(tmpdir(), "pes-prometheus-"));
  try {
    const dataDir = join(dir, "data");
    const metricsFile = join(dir, "history.om.txt");
    const configFile = join(dir, "prometheus.yml");
    await writeFile(metricsFile, options.openMetrics);
    // No scrape_configs: the server only ever holds the backfilled history.
    await writeFile(configFile, "global:\n  evaluation_interval: 1m\n");
    await run(promtool, ["tsdb", "create-blocks-from", "openmetrics", metricsFile, dataDir]);

    const served = await serveOnFreePort(
      "prometheus",
      prometheus,
      (port) => [
        `--storage.tsdb.path=${dataDir}`,
        `--web.listen-address=127.0.0.1:${port}`,
        `--config.file=${configFile}`,
        // Retention is measured from the newest block, but a long one makes old histories safe too.
        "--storage.tsdb.retention.time=100y",
      ],
      dir,
      options.readyTimeoutMs ?? 30_000,
    );
    return { ...served, directory: dir };
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
}

/** One synthetic series for `toOpenMetrics`. */
export interface SyntheticSeries {
  name: string;
  labels?: Readonly<Record<string, string>>;
  help?: string;
  /** Default `gauge`. A `counter`'s name must end in `_total`. */
  type?: "gauge" | "counter" | "unknown";
  /** `[unix seconds, value]` pairs; written in time order. */
  samples: ReadonlyArray<readonly [number, number]>;
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/**
 * Renders series as OpenMetrics text (the format `promtool tsdb create-blocks-from openmetrics`
 * reads), ending in `# EOF`. Series of the same name form one family, as the format requires.
 * @throws Error on an invalid metric or label name, or a counter whose name does not end in `_total`.
 */
export function toOpenMetrics(series: readonly SyntheticSeries[]): string {
  const families = new Map<string, SyntheticSeries[]>();
  for (const item of series) {
    if (!NAME.test(item.name)) throw new Error(`invalid metric name ${JSON.stringify(item.name)}`);
    const family = families.get(item.name) ?? [];
    family.push(item);
    families.set(item.name, family);
  }
  const lines: string[] = [];
  for (const [name, members] of families) {
    const type = members[0]?.type ?? "gauge";
    if (type === "counter" && !name.endsWith("_total")) {
      throw new Error(`counter ${name} must end in _total`);
    }
    // OpenMetrics names a counter family without its _total suffix.
    const familyName = type === "counter" ? name.slice(0, -"_total".length) : name;
    const help = members.find((member) => member.help !== undefined)?.help;
    if (help !== undefined) lines.push(`# HELP ${familyName} ${escapeHelp(help)}`);
    lines.push(`# TYPE ${familyName} ${type}`);
    for (const member of members) {
      const labels = renderLabels(member.labels ?? {});
      const samples = [...member.samples].sort((a, b) => a[0] - b[0]);
      for (const [time, value] of samples) lines.push(`${name}${labels} ${renderNumber(value)} ${time}`);
    }
  }
  lines.push("# EOF", "");
  return lines.join("\n");
}

function renderLabels(labels: Readonly<Record<string, string>>): string {
  const entries = Object.entries(labels);
  if (entries.length === 0) return "";
  const parts = entries.map(([key, value]) => {
    if (!LABEL_NAME.test(key)) throw new Error(`invalid label name ${JSON.stringify(key)}`);
    return `${key}="${value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n")}"`;
  });
  return `{${parts.join(",")}}`;
}

function renderNumber(value: number): string {
  if (Number.isNaN(value)) return "NaN";
  if (value === Infinity) return "+Inf";
  if (value === -Infinity) return "-Inf";
  return String(value);
}

function escapeHelp(help: string): string {
  return help.replace(/\\/g, "\\\\").replace(/\n/g, "\\n");
}
