/**
 * Where a process's CPU goes, by part of the service: each sample of a V8 CPU profile (`node --cpu-prof`)
 * is charged to the nearest frame of the service's own code on its stack (so an ioredis write made by the
 * chart store counts as charts, a socket write made while answering a request counts as the route), and a
 * sample with no such frame to the library at its top (a Redis reply parsed as it arrives, an HTTP request
 * read off its socket). Idle time is left out: shares are of the busy time.
 */

/** The parts of a `.cpuprofile` file this reads (Chrome DevTools protocol, `Profiler.Profile`). */
export interface CpuProfile {
  nodes: readonly { id: number; callFrame: { functionName: string; url: string }; children?: readonly number[] }[];
  samples: readonly number[];
  timeDeltas: readonly number[];
}

export interface ProfileShares {
  /** `api` or `worker`, from the entry point the profile's code was loaded from; `other` for anything else. */
  role: "api" | "worker" | "other";
  busyMs: number;
  /** Part of the service → its busy time, ms (a share is that over `busyMs`). */
  partMs: ReadonlyMap<string, number>;
}

/** The service's own code, by `<package>/<file>` under `packages/*` or `apps/*` (built, under `dist/`); first match wins. */
const OWN_CODE: readonly (readonly [RegExp, string])[] = [
  [/^(executions\/chart-store|worker\/execution-charts|analysis\/chart-data|contracts\/execution-charts)/, "charts: their data and its SET"],
  [/^(executions\/evidence-store|engine\/(evidence-bundle|keep-evidence)|contracts\/evidence-bundle|analysis\/replay)/, "evidence bundle"],
  [/^executions\/batch|^api\/routes\/batch|^contracts\/batch/, "async batches"],
  [/^(memory\/|worker\/execution-memory)/, "memory: recall and remember"],
  [/^(executions\/|api\/executions\.js|contracts\/job-reply)/, "execution lifecycle: admit, enqueue, finish, reply"],
  [/^jobs\//, "job runtime: BullMQ worker and producer"],
  [/^(connectors\/|engine\/(query-slots|same-query|concurrency-limit))/, "the action's query: connector and HTTP to the data source"],
  [/^(analysis\/|engine\/|contracts\/(execution-verdict|observation))/, "analysis: findings, verdict, summary"],
  [/^api\/auth\//, "authentication: JWT"],
  [/^(api\/(json-body|validation)|contracts\/|playbooks\/|templates\/)/, "input: body, validation, playbook resolution"],
  [/^(metrics\/|api\/http-metrics|worker\/worker-http-server)/, "metrics"],
  [/^tracing\//, "tracing (no-op spans)"],
  [/^(logger\/|api\/access-log)/, "logging"],
  [/^(api|worker)\//, "routes and job handlers: headers, writing the response"],
];

/** Libraries and Node's internals at the top of a stack with none of the service's code on it. */
const LIBRARIES: readonly (readonly [RegExp, string])[] = [
  [/node_modules\/(ioredis|bullmq|msgpackr|cluster-key-slot|denque|redis-parser|redis-errors)\//, "Redis client and BullMQ: replies as they arrive"],
  [/node_modules\/undici\//, "the action's query: connector and HTTP to the data source"],
  [
    /node_modules\/(express|router|body-parser|raw-body|type-is|iconv-lite|parseurl|finalhandler|on-finished|content-type)\/|node:_http|node:internal\/http/,
    "HTTP server: Node's http, Express",
  ],
  [/node:net|node:internal\/(stream|net)/, "socket I/O (Redis and HTTP)"],
];

/** V8's own pseudo-frames; idle time (null) is not counted. */
const PSEUDO_FRAMES = new Map<string, string | null>([
  ["(idle)", null],
  ["(garbage collector)", "garbage collection"],
  ["(program)", "V8 and native code (unattributed)"],
]);

export function profileShares(profile: CpuProfile): ProfileShares {
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const parents = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parents.set(child, node.id);

  const partOf = new Map<number, string | null>();
  const classify = (id: number): string | null => {
    const known = partOf.get(id);
    if (known !== undefined) return known;
    const top = nodes.get(id)?.callFrame;
    const pseudo = PSEUDO_FRAMES.get(top?.functionName ?? "(idle)");
    const part = pseudo !== undefined ? pseudo : (ownCodePart(id) ?? libraryPart(id));
    partOf.set(id, part);
    return part;
  };
  const ancestors = function* (id: number): Generator<string> {
    for (let at: number | undefined = id; at !== undefined; at = parents.get(at)) yield nodes.get(at)?.callFrame.url ?? "";
  };
  const ownCodePart = (id: number): string | undefined => {
    for (const url of ancestors(id)) {
      const file = /\/(?:packages|apps)\/([^/]+)\/dist\/(.+)$/.exec(url);
      if (file !== null) return firstMatch(OWN_CODE, `${file[1]}/${file[2]}`) ?? `other: ${file[1]}/${file[2]}`;
    }
    return undefined;
  };
  const libraryPart = (id: number): string => {
    for (const url of ancestors(id)) {
      const part = firstMatch(LIBRARIES, url);
      if (part !== undefined) return part;
    }
    return "Node's internals: timers, microtasks, events";
  };

  const partMs = new Map<string, number>();
  let busyMs = 0;
  profile.samples.forEach((id, index) => {
    const part = classify(id);
    if (part === null) return;
    const ms = (profile.timeDeltas[index] ?? 0) / 1000;
    partMs.set(part, (partMs.get(part) ?? 0) + ms);
    busyMs += ms;
  });
  return { role: roleOf(profile), busyMs, partMs };
}

function firstMatch(rules: readonly (readonly [RegExp, string])[], text: string): string | undefined {
  return rules.find(([pattern]) => pattern.test(text))?.[1];
}

function roleOf(profile: CpuProfile): ProfileShares["role"] {
  const urls = profile.nodes.map((node) => node.callFrame.url);
  if (urls.some((url) => url.endsWith("/apps/api/dist/main.js"))) return "api";
  if (urls.some((url) => url.endsWith("/apps/worker/dist/main.js"))) return "worker";
  return "other";
}
