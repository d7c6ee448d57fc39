import { badDeploy } from "./bad-deploy.js";
import { briefBlip } from "./brief-blip.js";
import { dbBehindService, dbConnections } from "./db-connections.js";
import { deployNotCause } from "./deploy-not-cause.js";
import { healthy } from "./healthy.js";
import { memoryLeak } from "./memory-leak.js";
import { nodeOom } from "./node-oom.js";
import { slowNode } from "./slow-node.js";
import { slowStorefront } from "./slow-storefront.js";
import type { Scenario } from "./scenario.js";
import { trafficSurge } from "./traffic-surge.js";
import { twoCauses } from "./two-causes.js";
import { upstreamOutage } from "./upstream-outage.js";
import { upstreamService } from "./upstream-service.js";

/** Every scenario, by name, with the function that builds its data for an issue time. */
export const SCENARIOS: ReadonlyArray<{ name: string; build: (issueAt: Date) => Scenario }> = [
  { name: "bad-deploy", build: badDeploy },
  { name: "db-connections", build: dbConnections },
  { name: "db-behind-service", build: dbBehindService },
  { name: "node-oom", build: nodeOom },
  { name: "upstream-outage", build: upstreamOutage },
  { name: "deploy-not-cause", build: deployNotCause },
  { name: "healthy", build: healthy },
  { name: "memory-leak", build: memoryLeak },
  { name: "slow-node", build: slowNode },
  { name: "upstream-service", build: upstreamService },
  { name: "traffic-surge", build: trafficSurge },
  { name: "brief-blip", build: briefBlip },
  { name: "two-causes", build: twoCauses },
  { name: "slow-storefront", build: slowStorefront },
];
