/** The parts of a V8 .cpuprofile (what `node --cpu-prof` writes) that a summary needs. */
export interface CpuProfile {
  nodes: {
    id: number;
    callFrame: { functionName: string; url: string; lineNumber: number };
    children?: number[];
  }[];
  samples: number[];
  timeDeltas: number[];
}

export interface HotSpot {
  name: string;
  /** Microseconds. */
  time: number;
  /** Share of all sampled time (idle included), percent. */
  percent: number;
  /** Share of busy time (idle excluded), percent. */
  busyPercent: number;
}

export interface ProfileSummary {
  totalMs: number;
  idlePercent: number;
  selfByFunction: HotSpot[];
  selfByModule: HotSpot[];
  /** Inclusive (self + callees) time of functions from this repository's packages and apps. */
  totalByOwnFunction: HotSpot[];
  /** Inclusive time of every function, wherever it comes from (who pays for a native hot spot). */
  totalByFunction: HotSpot[];
}

/**
 * Where a script comes from: the npm package for node_modules, `@pes/<name>` or `apps/<name>` for
 * this repository, `node:<module>` for Node's own, or V8's pseudo-frames such as "(garbage collector)".
 */
export function moduleOf(url: string, functionName: string): string {
  if (url === "") return functionName.startsWith("(") ? functionName : "(native)";
  const nodeModules = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (nodeModules?.[1] !== undefined) return nodeModules[1];
  const own = /\/(packages|apps)\/([^/]+)\//.exec(url);
  if (own?.[1] !== undefined && own[2] !== undefined) return own[1] === "packages" ? `@pes/${own[2]}` : `apps/${own[2]}`;
  const internal = /^node:(?:internal\/)?([^/]+(?:\/[^/]+)?)/.exec(url);
  if (internal?.[1] !== undefined) return `node:${internal[1]}`;
  return url;
}

function shortUrl(url: string): string {
  const nodeModules = url.lastIndexOf("node_modules/");
  if (nodeModules >= 0) return url.slice(nodeModules + "node_modules/".length);
  const own = /\/((?:packages|apps)\/.*)$/.exec(url);
  if (own?.[1] !== undefined) return own[1];
  return url.replace(/^file:\/\//, "");
}

const IDLE = "(idle)";

function frameKey(frame: { functionName: string; url: string; lineNumber: number }): string {
  if (frame.url === "") return frame.functionName || "(anonymous)";
  return `${frame.functionName || "(anonymous)"} ${shortUrl(frame.url)}:${frame.lineNumber + 1}`;
}

/**
 * Who pays for a hot function: the self time of every frame whose key matches `pattern`, grouped by the
 * `depth` nearest frames above it that are not Node's own (`node:` internals and natives are skipped, so
 * the chain names the library or our code that asked). Answers "which caller makes all these writev calls".
 */
export function callersOf(profile: CpuProfile, pattern: RegExp, depth = 4, top = 15): HotSpot[] {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parentOf = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);
  const selfByNode = new Map<number, number>();
  let total = 0;
  let idle = 0;
  profile.samples.forEach((id, index) => {
    const delta = Math.max(0, profile.timeDeltas[index] ?? 0);
    total += delta;
    if (byId.get(id)?.callFrame.functionName === IDLE) idle += delta;
    selfByNode.set(id, (selfByNode.get(id) ?? 0) + delta);
  });
  const byChain = new Map<string, number>();
  for (const [id, time] of selfByNode) {
    const node = byId.get(id);
    if (node === undefined || !pattern.test(frameKey(node.callFrame))) continue;
    const chain: string[] = [];
    for (let current = parentOf.get(id); current !== undefined && chain.length < depth; current = parentOf.get(current)) {
      const frame = byId.get(current)?.callFrame;
      if (frame !== undefined && frame.url !== "" && !frame.url.startsWith("node:")) chain.push(frameKey(frame));
    }
    const key = `${frameKey(node.callFrame)} ← ${chain.join(" ← ")}`;
    byChain.set(key, (byChain.get(key) ?? 0) + time);
  }
  const busy = total - idle;
  return [...byChain.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([name, time]) => ({ name, time, percent: (100 * time) / total, busyPercent: busy === 0 ? 0 : (100 * time) / busy }));
}

/** Self time by function and by module, and inclusive time of our own functions, from sample deltas. */
export function summarizeProfile(profile: CpuProfile, top = 25): ProfileSummary {
  const selfByNode = new Map<number, number>();
  for (let index = 0; index < profile.samples.length; index += 1) {
    const node = profile.samples[index];
    const delta = profile.timeDeltas[index] ?? 0;
    if (node !== undefined) selfByNode.set(node, (selfByNode.get(node) ?? 0) + Math.max(0, delta));
  }
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parentOf = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);

  const functionKey = (id: number): string => {
    const frame = byId.get(id)?.callFrame;
    return frame === undefined ? "?" : frameKey(frame);
  };

  let total = 0;
  let idle = 0;
  const selfByFunction = new Map<string, number>();
  const selfByModule = new Map<string, number>();
  const totalByOwnFunction = new Map<string, number>();
  const totalByFunction = new Map<string, number>();
  for (const [id, time] of selfByNode) {
    const node = byId.get(id);
    if (node === undefined) continue;
    total += time;
    if (node.callFrame.functionName === IDLE) idle += time;
    const key = functionKey(id);
    selfByFunction.set(key, (selfByFunction.get(key) ?? 0) + time);
    const module = moduleOf(node.callFrame.url, node.callFrame.functionName);
    selfByModule.set(module, (selfByModule.get(module) ?? 0) + time);
    // Inclusive time: credit this node's self time once to every distinct function on its stack.
    const seen = new Set<string>();
    for (let current: number | undefined = id; current !== undefined; current = parentOf.get(current)) {
      const frame = byId.get(current)?.callFrame;
      if (frame === undefined || frame.functionName === "(root)") continue;
      const stackKey = functionKey(current);
      if (seen.has(stackKey)) continue;
      seen.add(stackKey);
      totalByFunction.set(stackKey, (totalByFunction.get(stackKey) ?? 0) + time);
      if (/\/(packages|apps)\//.test(frame.url) && !frame.url.includes("node_modules")) {
        totalByOwnFunction.set(stackKey, (totalByOwnFunction.get(stackKey) ?? 0) + time);
      }
    }
  }
  const busy = total - idle;
  const rank = (map: Map<string, number>, excludeIdle: boolean): HotSpot[] =>
    [...map.entries()]
      .filter(([name]) => !(excludeIdle && name === IDLE))
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, time]) => ({
        name,
        time,
        percent: total === 0 ? 0 : (100 * time) / total,
        busyPercent: busy === 0 ? 0 : (100 * time) / busy,
      }));
  return {
    totalMs: total / 1000,
    idlePercent: total === 0 ? 0 : (100 * idle) / total,
    selfByFunction: rank(selfByFunction, true),
    selfByModule: rank(selfByModule, true),
    totalByOwnFunction: rank(totalByOwnFunction, true),
    totalByFunction: rank(totalByFunction, true),
  };
}
