import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { findBinary, serveOnFreePort } from "./child-process.js";

/** An alert as Alertmanager's API v2 takes it (`POST /api/v2/alerts`). */
export interface PostableAlert {
  labels: Readonly<Record<string, string>>;
  annotations?: Readonly<Record<string, string>>;
  /** When it started firing; may be in the past. Default: when Alertmanager receives it. */
  startsAt?: Date;
  /** When it stopped; default: the configuration's resolve_timeout after it was received. */
  endsAt?: Date;
  generatorURL?: string;
}

/** A silence as `POST /api/v2/silences` takes it. */
export interface PostableSilence {
  matchers: ReadonlyArray<{ name: string; value: string; isRegex?: boolean; isEqual?: boolean }>;
  startsAt: Date;
  endsAt: Date;
  createdBy: string;
  comment: string;
}

export interface LocalAlertmanager {
  /** Base URL of the API and UI, e.g. `http://127.0.0.1:41234` (no trailing slash). */
  url: string;
  /** The temporary directory holding its configuration and state; `stop()` removes it. */
  directory: string;
  /** Sends alerts as a Prometheus would; resolves once Alertmanager has accepted them. */
  postAlerts(alerts: readonly PostableAlert[]): Promise<void>;
  /** Creates a silence; resolves with its id. */
  postSilence(silence: PostableSilence): Promise<string>;
  /** Stops the process and removes its directory. Safe to call twice. */
  stop(): Promise<void>;
}

export interface StartAlertmanagerOptions {
  /**
   * Its configuration (YAML). Default: one route to a receiver that notifies nobody, and alerts that
   * stay firing for an hour unless their endsAt says otherwise (the test posts them once).
   */
  config?: string;
  /** How long to wait for `/-/ready`; default 30 s. */
  readyTimeoutMs?: number;
}

const DEFAULT_CONFIG = `global:
  resolve_timeout: 1h
route:
  receiver: "null"
receivers:
  - name: "null"
`;

/**
 * Starts a real Alertmanager (Debian's `prometheus-alertmanager`) on a free loopback port, alone: its
 * cluster listener is off (`--cluster.listen-address=` empty), its state in a temporary directory.
 * @throws Error when the binary is missing or Alertmanager does not become ready.
 */
export async function startAlertmanager(options: StartAlertmanagerOptions = {}): Promise<LocalAlertmanager> {
  const binary = await findBinary("prometheus-alertmanager", "prometheus-alertmanager");
  const dir = await mkdtemp(join(tmpdir(), "pes-alertmanager-"));
  try {
    const configFile = join(dir, "alertmanager.yml");
    await writeFile(configFile, options.config ?? DEFAULT_CONFIG);
    const { url, stop } = await serveOnFreePort(
      "alertmanager",
      binary,
      (port) => [`--config.file=${configFile}`, `--storage.path=${join(dir, "data")}`, `--web.listen-address=127.0.0.1:${port}`, "--cluster.listen-address="],
      dir,
      options.readyTimeoutMs ?? 30_000,
    );
    return {
      url,
      directory: dir,
      postAlerts: (alerts) => postJson(`${url}/api/v2/alerts`, alerts.map(postableAlert)).then(() => undefined),
      postSilence: async (silence) => {
        const body = {
          ...silence,
          startsAt: silence.startsAt.toISOString(),
          endsAt: silence.endsAt.toISOString(),
          matchers: silence.matchers.map(withDefaults),
        };
        const answer = (await postJson(`${url}/api/v2/silences`, body)) as { silenceID: string };
        return answer.silenceID;
      },
      stop,
    };
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
}

function postableAlert(alert: PostableAlert): Record<string, unknown> {
  return {
    labels: alert.labels,
    annotations: alert.annotations ?? {},
    ...(alert.startsAt === undefined ? {} : { startsAt: alert.startsAt.toISOString() }),
    ...(alert.endsAt === undefined ? {} : { endsAt: alert.endsAt.toISOString() }),
    ...(alert.generatorURL === undefined ? {} : { generatorURL: alert.generatorURL }),
  };
}

function withDefaults(matcher: PostableSilence["matchers"][number]): Record<string, unknown> {
  return { isRegex: false, isEqual: true, ...matcher };
}

async function postJson(url: string, body: unknown): Promise<unknown> {
  const response = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  const text = await response.text();
  if (!response.ok) throw new Error(`alertmanager answered ${response.status} to POST ${new URL(url).pathname}: ${text}`);
  return text === "" ? undefined : JSON.parse(text);
}
