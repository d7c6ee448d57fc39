import type { ServerResponse } from "node:http";
import { startTestHttpServer, type TestHttpServer } from "./test-http-server.js";

/** One service's last deploy. */
export interface DemoDeploy {
  version: string;
  deployedAt: Date;
}

/** The demo incident's deploy: checkout v1.42, `leadMinutes` (default 4) before its latency jumps. */
export function demoDeploy(incidentAt: Date, leadMinutes = 4): DemoDeploy {
  return { version: "v1.42", deployedAt: new Date(incidentAt.getTime() - leadMinutes * 60_000) };
}

/**
 * A deploy API such as a CD system exposes, for the demo and the tests: `GET /services/<service>/deploys/latest`
 * answers `{ "service", "version", "deployedAt" }` (the http connector's example in docs/playbook-format.md),
 * 404 `{ "error" }` for a service it does not know.
 */
export function startDemoDeploys(deploys: Readonly<Record<string, DemoDeploy>>): Promise<TestHttpServer> {
  return startTestHttpServer((request, response) => {
    const match = /^\/services\/([^/?]+)\/deploys\/latest(?:\?.*)?$/.exec(request.url);
    const service = match?.[1] === undefined ? undefined : decodeURIComponent(match[1]);
    const deploy = service === undefined ? undefined : Object.hasOwn(deploys, service) ? deploys[service] : undefined;
    if (request.method !== "GET" || service === undefined) return send(response, 404, { error: "not found" });
    if (deploy === undefined) return send(response, 404, { error: `no deploys of ${service}` });
    send(response, 200, { service, version: deploy.version, deployedAt: deploy.deployedAt.toISOString() });
  });
}

function send(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { "content-type": "application/json" });
  response.end(JSON.stringify(body));
}
