import { get as httpGet } from "node:http";
import { get as httpsGet } from "node:https";
import { expect } from "vitest";
import type { PlaybookExecutionResult } from "@pes/contracts";
import type { RunningScenario } from "./run-scenario.js";

const REDIRECTS = 3;

/**
 * What every scenario's answer must show whatever its incident: every action ran against its server
 * (none failed, none skipped), every action has a link, and every link opens what the action looked at:
 * one at a scenario's server answers there (the API server with the token, over TLS checked against the
 * cluster's CA), and one into Grafana or Kibana encodes the query. An action about the scope (a service, a
 * database, a node) carries it in its link, except a Kubernetes list, which is the namespace's (names are
 * matched as prefixes, which the API cannot filter on).
 */
export async function expectEveryActionRanAndLinks(run: RunningScenario, result: PlaybookExecutionResult, scope: string): Promise<void> {
  expect(result.error).toBeUndefined();
  // A failed or skipped action would mean the scenario tested less than it claims (no data can be the incident's truth).
  expect(result.verdict?.unchecked.filter(({ reason }) => reason !== "no-data")).toEqual([]);
  const actions = result.actionResults ?? [];
  expect(actions.length).toBeGreaterThan(0);
  const origins = new Map(Object.entries(run.urls).map(([name, url]) => [new URL(url).origin, name]));
  for (const action of actions) {
    const title = action.title ?? "";
    expect(action.mostImportantLink, title).toBeDefined();
    const link = new URL(action.mostImportantLink ?? "");
    const source = origins.get(link.origin);
    if (source === "cluster") {
      expect(link.pathname, title).toMatch(/^\/apis?\/(v1|apps\/v1)\/namespaces\/(shop|default)\//);
      expect(await statusCodeOf(link, { authorization: `Bearer ${run.cluster.token}` }, run.cluster.ca), `${title}: ${link.href}`).toBe(200);
      continue;
    }
    if (source !== undefined) expect(await statusCodeOf(link, {}, undefined), `${title}: ${link.href}`).toBe(200);
    else expect(link.hostname, title).toMatch(/^(grafana|kibana)\.shop\.example$/);
    if (title.includes(scope)) expect(decodeURIComponent(link.href), title).toContain(scope);
  }
}

/** The status a GET of `url` ends with, following a few redirects (Prometheus' /graph moves to /query). */
async function statusCodeOf(url: URL, headers: Record<string, string>, ca: string | undefined, redirects = REDIRECTS): Promise<number> {
  const { status, location } = await new Promise<{ status: number; location?: string }>((resolve, reject) => {
    const options = { headers, ...(ca === undefined ? {} : { ca }) };
    const request = (url.protocol === "https:" ? httpsGet : httpGet)(url, options, (response) => {
      response.resume();
      resolve({ status: response.statusCode ?? 0, ...(response.headers.location === undefined ? {} : { location: response.headers.location }) });
    });
    request.on("error", reject);
  });
  if (status >= 300 && status < 400 && location !== undefined && redirects > 0) return statusCodeOf(new URL(location, url), headers, ca, redirects - 1);
  return status;
}
