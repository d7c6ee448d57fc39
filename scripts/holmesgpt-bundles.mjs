#!/usr/bin/env node
// Converts HolmesGPT's recorded investigation cases (tests/llm/fixtures/test_investigate/<case>/ of
// robusta-dev/holmesgpt, Apache-2.0) into evidence bundles that `pes replay` and `pes eval` read: the
// tool calls' recorded answers (`kubectl describe pod`, `kubectl events`, `kubectl logs`) become the
// observations a generic playbook of four actions would have made (the pod, its events, its logs, the
// alert that paged). Only what the recordings date is kept; see test/scenarios/bundles/holmesgpt/README.md
// for how times are anchored.
//
//   node scripts/holmesgpt-bundles.mjs --git-dir /path/to/holmesgpt.git <case> [<case>…] --out <folder>
//   node scripts/holmesgpt-bundles.mjs --dir /path/to/test_investigate <case> [<case>…] --out <folder>
//
// Each case becomes <folder>/<case>.bundle.json; what a case is expected to conclude is written by hand
// beside it (<case>.expected.json), from the case's own `expected_output`.
import { execFileSync } from "node:child_process";
import { readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const CASES = "tests/llm/fixtures/test_investigate";
const MINUTE = 60_000;
/** An alert fires at the earliest this long after its condition first holds (a rule's `for`, scrape and evaluation). */
const ALERT_DELAY_MS = MINUTE;
/** How much of the past the playbook's actions look at before the issue time. */
const LOOKBACK_MS = 60 * MINUTE;

function main(argv) {
  const args = { cases: [] };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--git-dir" || arg === "--dir" || arg === "--out") args[arg.slice(2)] = argv[++i];
    else args.cases.push(arg);
  }
  if (args.out === undefined || (args["git-dir"] === undefined && args.dir === undefined) || args.cases.length === 0) {
    process.stderr.write("usage: holmesgpt-bundles.mjs (--git-dir <repo.git> | --dir <test_investigate>) <case>… --out <folder>\n");
    process.exit(2);
  }
  const source = args["git-dir"] !== undefined ? gitSource(args["git-dir"]) : dirSource(args.dir);
  for (const name of args.cases) {
    const bundle = convertCase(name, source.files(name), (file) => source.read(name, file));
    writeFileSync(join(args.out, `${name}.bundle.json`), `${JSON.stringify(bundle, null, 2)}\n`);
    process.stderr.write(`${name}: ${bundle.actions.length} actions, issue time ${bundle.issue.time}\n`);
  }
}

function gitSource(gitDir) {
  const git = (...command) => execFileSync("git", ["--git-dir", gitDir, ...command], { encoding: "utf8", maxBuffer: 64 << 20 });
  return {
    files: (name) =>
      git("ls-tree", "--name-only", "HEAD", `${CASES}/${name}/`)
        .split("\n")
        .filter(Boolean)
        .map((path) => path.slice(path.lastIndexOf("/") + 1)),
    read: (name, file) => git("show", `HEAD:${CASES}/${name}/${file}`),
  };
}

function dirSource(dir) {
  return { files: (name) => readdirSync(join(dir, name)), read: (name, file) => readFileSync(join(dir, name, file), "utf8") };
}

/** A recorded tool call: the tool's name, its parameters, whether it succeeded, and its output. */
function toolCalls(text) {
  const lines = text.split("\n");
  const header = JSON.parse(lines[0] ?? "{}");
  const meta = JSON.parse(lines[1] ?? "{}");
  let body = lines.slice(2);
  if (body[0] === "stdout:") body = body.slice(1);
  const stderr = body.lastIndexOf("stderr:");
  if (stderr !== -1) body = body.slice(0, stderr);
  return { tool: header.tool_name, params: header.match_params ?? {}, ok: meta.status === "success", output: body.join("\n") };
}

/** "6m40s", "87s", "4h2m", "49d" → milliseconds. */
function age(text) {
  const units = { d: 86_400_000, h: 3_600_000, m: MINUTE, s: 1000 };
  let ms = 0;
  for (const [, value, unit] of text.matchAll(/(\d+)([dhms])/g)) ms += Number(value) * units[unit];
  return ms;
}

/** `Thu, 27 Feb 2025 07:30:28 +0100` → ISO 8601 (UTC). */
function describeTime(text) {
  const at = new Date(text.trim());
  return Number.isNaN(at.getTime()) ? undefined : at.toISOString();
}

/** The rows of a table whose columns start where its header's words start (kubectl's tables). */
function tableRows(lines, header) {
  const starts = [...header.matchAll(/\S+/g)].map((match) => match.index);
  return lines.map((line) => starts.map((start, i) => line.slice(start, starts[i + 1] ?? line.length).trim()));
}

/** `kubectl describe pod`: the pod (its spec and status as the API holds them) and its events, aged from `now` (set later). */
function describePod(text) {
  const lines = text.split("\n");
  const field = (name) =>
    lines
      .find((line) => line.startsWith(`${name}:`))
      ?.slice(name.length + 1)
      .trim();
  const pod = { metadata: { name: field("Name"), namespace: field("Namespace") }, spec: { containers: [] }, status: { phase: field("Status") } };
  const start = field("Start Time");
  if (start !== undefined) pod.status.startTime = describeTime(start);
  const owner = field("Controlled By");
  if (owner?.includes("/")) {
    const [kind, name] = owner.split("/");
    pod.metadata.ownerReferences = [{ kind, name }];
  }
  const labels = {};
  const labelsAt = lines.findIndex((line) => line.startsWith("Labels:"));
  for (let i = labelsAt; i >= 0 && i < lines.length; i++) {
    const text = i === labelsAt ? lines[i].slice("Labels:".length) : lines[i];
    if (i > labelsAt && !/^\s{2,}\S/.test(text)) break;
    const match = /^\s*([^=\s]+)=(\S*)\s*$/.exec(text);
    if (match !== null) labels[match[1]] = match[2];
  }
  if (Object.keys(labels).length > 0) pod.metadata.labels = labels;
  for (const [section, specKey, statusKey] of [
    ["Init Containers:", "initContainers", "initContainerStatuses"],
    ["Containers:", "containers", "containerStatuses"],
  ]) {
    const at = lines.indexOf(section);
    if (at === -1) continue;
    const specs = [];
    const statuses = [];
    let i = at + 1;
    while (i < lines.length && /^ {2}\S/.test(lines[i])) {
      const name = lines[i].trim().replace(/:$/, "");
      const block = [];
      i++;
      while (i < lines.length && /^ {4}/.test(lines[i])) block.push(lines[i++]);
      const { spec, status } = describeContainer(name, block);
      specs.push(spec);
      if (status !== undefined) statuses.push(status);
    }
    pod.spec[specKey] = specs;
    if (statuses.length > 0) pod.status[statusKey] = statuses;
  }
  const conditionsAt = lines.indexOf("Conditions:");
  if (conditionsAt !== -1) {
    const conditions = [];
    for (let i = conditionsAt + 2; i < lines.length && /^ {2}\S/.test(lines[i]); i++) {
      const [type, status] = lines[i].trim().split(/\s+/);
      conditions.push({ type, status });
    }
    pod.status.conditions = conditions;
  }
  const eventsAt = lines.findIndex((line) => line.startsWith("Events:"));
  const events = eventsAt === -1 || lines[eventsAt].includes("<none>") ? [] : eventTable(lines.slice(eventsAt + 1), { kind: "Pod", name: pod.metadata.name });
  return { pod, events };
}

/** A container's block of `kubectl describe pod`: its spec (image, command, args, limits) and its status. */
function describeContainer(name, block) {
  const spec = { name };
  const value = (key, from = 0, to = block.length) => {
    for (let i = from; i < to; i++) {
      const match = new RegExp(`^\\s{4,6}${key}:\\s*(.*)$`).exec(block[i]);
      if (match !== null) return { text: match[1].trim(), at: i };
    }
    return undefined;
  };
  const list = (key) => {
    const found = value(key);
    if (found === undefined) return undefined;
    const items = [];
    for (let i = found.at + 1; i < block.length && /^ {6}\S/.test(block[i]); i++) items.push(block[i].trim());
    return items;
  };
  const image = value("Image")?.text;
  if (image) spec.image = image;
  const command = list("Command");
  if (command?.length) spec.command = command;
  const args = list("Args");
  if (args?.length) spec.args = args;
  const limits = list("Limits");
  if (limits?.length) spec.resources = { limits: Object.fromEntries(limits.map((item) => item.split(/:\s+/))) };
  const state = (key) => {
    const found = value(key);
    if (found === undefined) return undefined;
    const [kind] = found.text.split(/\s+/);
    let end = found.at + 1;
    while (end < block.length && /^ {6}\S/.test(block[end])) end++;
    const detail = (field) => value(field, found.at + 1, end)?.text;
    if (kind === "Waiting")
      return { waiting: { ...(detail("Reason") ? { reason: detail("Reason") } : {}), ...(detail("Message") ? { message: detail("Message") } : {}) } };
    if (kind === "Running")
      return {
        running: { startedAt: describeTime(found.text.replace(/^Running\s*/, "").replace(/^Started:\s*/, "")) ?? describeTime(detail("Started") ?? "") },
      };
    if (kind === "Terminated") {
      const started = describeTime(detail("Started") ?? "");
      const finished = describeTime(detail("Finished") ?? "");
      return {
        terminated: {
          ...(detail("Reason") ? { reason: detail("Reason") } : {}),
          ...(detail("Message") ? { message: detail("Message") } : {}),
          ...(detail("Exit Code") ? { exitCode: Number(detail("Exit Code")) } : {}),
          // kubectl prints a container that never started as started at the epoch.
          ...(started !== undefined && !started.startsWith("1970-") ? { startedAt: started } : {}),
          ...(finished !== undefined ? { finishedAt: finished } : {}),
        },
      };
    }
    return undefined;
  };
  const restarts = value("Restart Count");
  if (restarts === undefined) return { spec };
  const status = { name, restartCount: Number(restarts.text), ...(image ? { image } : {}) };
  const current = state("State");
  if (current !== undefined) status.state = current;
  const last = state("Last State");
  if (last !== undefined) status.lastState = last;
  const ready = value("Ready")?.text;
  if (ready !== undefined) status.ready = ready === "True";
  return { spec, status };
}

/** The events of `kubectl describe` (Type Reason Age From Message), about `object`; aged until `now` is known. */
function eventTable(lines, object) {
  const header = lines.findIndex((line) => /^\s+Type\s+Reason\s+Age/.test(line));
  if (header === -1) return [];
  const rows = tableRows(
    lines.slice(header + 2).filter((line) => line.trim() !== ""),
    lines[header],
  );
  return rows.map(([type, reason, ageText, from, message]) => {
    const over = /\(x(\d+) over ([^)]+)\)/.exec(ageText);
    return {
      object,
      type,
      reason,
      source: from,
      message: message.replace(/\\"/g, '"'),
      lastAgo: age(ageText.replace(/\(.*\)/, "")),
      firstAgo: over === null ? age(ageText) : age(over[2]),
      count: over === null ? 1 : Number(over[1]),
    };
  });
}

/** `kubectl events` (LAST SEEN TYPE REASON OBJECT MESSAGE): only the last occurrence is dated. */
function eventsCommand(text) {
  const lines = text.split("\n").filter((line) => line.trim() !== "");
  const header = lines.findIndex((line) => line.startsWith("LAST SEEN"));
  if (header === -1) return [];
  return tableRows(lines.slice(header + 1), lines[header]).map(([lastSeen, type, reason, objectText, message]) => {
    const [kind, name] = objectText.split("/");
    const ago = age(lastSeen);
    return { object: { kind, name }, type, reason, message, lastAgo: ago, firstAgo: ago, count: 1 };
  });
}

/** A log line's own time, when it starts with one or ends with `Time: …` (taken as UTC, as the recordings' are). */
function lineTime(line) {
  const match =
    /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}:\d{2})(?:[.,](\d{1,9}))?(Z|[+-]\d{2}:?\d{2})?/.exec(line) ??
    /Time: (\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2})()()\s*$/.exec(line);
  if (match === null) return undefined;
  const [, day, clock, fraction = "", zone = ""] = match;
  const at = Date.parse(`${day}T${clock}${fraction ? `.${fraction.slice(0, 3).padEnd(3, "0")}` : ""}${zone || "Z"}`);
  return Number.isNaN(at) ? undefined : at;
}

export function convertCase(name, files, read) {
  const request = JSON.parse(read("investigate_request.json"));
  const issueData = files.includes("issue_data.json") ? JSON.parse(read("issue_data.json")) : {};
  // Robusta's finding (the alert as it recorded it), when the case fetched it: when it started.
  const finding = files.includes("fetch_finding_by_id.txt") ? read("fetch_finding_by_id.txt") : "";
  const recordedStart = Date.parse(issueData.starts_at ?? /^starts_at: '?([^'\n]+)'?$/m.exec(finding)?.[1] ?? "");
  const subject = request.subject ?? {};
  const calls = files
    .filter((file) => file.endsWith(".txt"))
    .flatMap((file) => {
      try {
        return [toolCalls(read(file))];
      } catch {
        return [];
      }
    });

  const pods = new Map();
  const events = [];
  for (const call of calls.filter((item) => item.ok && item.tool === "kubectl_describe" && item.params.kind === "pod")) {
    const { pod, events: podEvents } = describePod(call.output);
    pods.set(pod.metadata.name, pod);
    events.push(...podEvents.map((event) => ({ ...event, pod })));
  }
  for (const call of calls.filter((item) => item.ok && item.tool === "kubectl_events")) events.push(...eventsCommand(call.output));

  // When the recordings were made: a pod's start plus the age of its scheduling, else the latest time
  // the recordings state (a container's start or end, a log line).
  const logCalls = calls.filter((item) => item.ok && /logs/.test(item.tool ?? ""));
  const stated = [...pods.values()].flatMap((pod) =>
    [...(pod.status.containerStatuses ?? []), ...(pod.status.initContainerStatuses ?? [])].flatMap((status) =>
      [status.state, status.lastState]
        .flatMap((state) => [state?.running?.startedAt, state?.terminated?.startedAt, state?.terminated?.finishedAt])
        .filter(Boolean)
        .map(Date.parse),
    ),
  );
  const logTimes = logCalls.flatMap((call) =>
    call.output
      .split("\n")
      .map(lineTime)
      .filter((at) => at !== undefined),
  );
  const scheduled = events.find((event) => event.reason === "Scheduled" && event.pod?.status.startTime !== undefined);
  const latest = Math.max(...stated, ...logTimes);
  const now = scheduled !== undefined ? Date.parse(scheduled.pod.status.startTime) + scheduled.firstAgo : Number.isFinite(latest) ? latest : recordedStart;
  if (!Number.isFinite(now)) throw new Error(`${name}: nothing in the recordings dates it`);

  const podName = subject.name ?? undefined;
  const namespace = subject.namespace ?? [...pods.values()][0]?.metadata.namespace ?? "default";
  const kubernetesEvents = events.map((event, index) => {
    const first = new Date(now - event.firstAgo).toISOString();
    const last = new Date(now - event.lastAgo).toISOString();
    return {
      metadata: { name: `${event.object.name}.${index}`, namespace },
      involvedObject: { kind: event.object.kind, name: event.object.name, namespace },
      reason: event.reason,
      message: event.message,
      type: event.type,
      count: event.count,
      firstTimestamp: first,
      lastTimestamp: last,
      ...(event.source === undefined ? {} : { source: { component: event.source } }),
    };
  });

  // Log lines: their own time; a line without one takes the previous line's, or, before any, the
  // container's last start (previous logs: its last termination's start).
  const streams = [];
  for (const call of logCalls) {
    const pod = pods.get(call.params.pod_name) ?? [...pods.values()][0];
    const statuses = [...(pod?.status.initContainerStatuses ?? []), ...(pod?.status.containerStatuses ?? [])];
    const previous = /previous/.test(call.tool);
    const startOf = statuses
      .map((status) => (previous ? status.lastState?.terminated?.startedAt : (status.state?.running?.startedAt ?? status.lastState?.terminated?.startedAt)))
      .find(Boolean);
    let at = startOf === undefined ? undefined : Date.parse(startOf);
    const lines = [];
    for (const line of call.output.split("\n")) {
      if (line.trim() === "" || /^Command `kubectl/.test(line) || /^Error from server/.test(line)) continue;
      at = lineTime(line) ?? at;
      if (at !== undefined) lines.push({ at, line });
    }
    if (lines.length === 0) continue;
    const labels = { namespace, pod: call.params.pod_name ?? pod?.metadata.name ?? "", ...(call.params.container ? { container: call.params.container } : {}) };
    streams.push({ labels, lines });
  }
  // The current and the previous container's logs overlap when the container is waiting: each line once.
  const seen = new Set();
  for (const stream of [...streams]) {
    stream.lines = stream.lines.filter(({ at, line }) => {
      const key = `${stream.labels.pod}\n${at}\n${line}`;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
    if (stream.lines.length === 0) streams.splice(streams.indexOf(stream), 1);
  }

  // The issue time: when its first sign shows (the earliest warning, else the first line that reads as an
  // error) plus the time an alert takes to fire, else when the case records that it began, else the recording.
  const warnings = kubernetesEvents.filter((event) => event.type === "Warning").map((event) => Date.parse(event.firstTimestamp));
  const errorLines = streams.flatMap((stream) => stream.lines.filter(({ line }) => /error|fail|exception|fatal/i.test(line)).map(({ at }) => at));
  const firstSign = Math.min(...warnings, ...(warnings.length === 0 ? errorLines : []));
  const time = Number.isFinite(firstSign) ? firstSign + ALERT_DELAY_MS : Number.isFinite(recordedStart) ? recordedStart : now;
  const end = Math.max(now, time + MINUTE);
  const window = { start: new Date(time - LOOKBACK_MS).toISOString(), time: new Date(time).toISOString(), end: new Date(end).toISOString() };

  const attributes = { namespace };
  const kind = (subject.kind ?? subject.subject_type ?? "").toLowerCase();
  if (podName && kind === "pod") attributes.pod = podName;
  else if (podName && kind) attributes[kind] = podName;
  else if (podName && pods.has(podName)) attributes.pod = podName;
  const about = podName ?? request.title;
  const actions = [];
  for (const pod of pods.values()) {
    actions.push({ title: `Pod ${pod.metadata.name}`, window, observation: { kind: "kubernetes-pods", items: [pod], name: pod.metadata.name } });
  }
  if (kubernetesEvents.length > 0) {
    actions.push({ title: `Events of ${about}`, window, observation: { kind: "kubernetes-events", items: kubernetesEvents } });
  }
  if (streams.length > 0) actions.push({ title: `Logs of ${about}`, window, observation: { kind: "logs", streams, counts: [] } });
  // An alert from Prometheus paged: it fires for the issue's subject from the issue time.
  if (request.source === "prometheus") {
    const alertname = request.context?.issue_type ?? request.title;
    actions.push({
      title: `Alerts firing for ${about}`,
      window,
      observation: {
        kind: "alertmanager",
        alerts: [
          {
            labels: { alertname, ...attributes, severity: "warning" },
            startsAt: new Date(time).toISOString(),
            endsAt: new Date(end + 5 * MINUTE).toISOString(),
          },
        ],
      },
    });
  }
  // The generic playbook's mitigation: roll back the Deployment a pod's ReplicaSet belongs to, when the cause is a deploy.
  const mitigations = [];
  for (const pod of pods.values()) {
    const owner = pod.metadata.ownerReferences?.[0];
    if (owner?.kind !== "ReplicaSet") continue;
    const deployment = owner.name.replace(/-[a-z0-9]{6,10}$/, "");
    mitigations.push({
      mitigation: { toolName: "kubectl", customName: `Roll back ${deployment}`, action: { kind: "kubernetes.rollout-undo", deployment, namespace } },
      when: { likelyCause: "deploy" },
    });
  }
  return {
    v: 1,
    issue: { bookName: "holmesgpt-investigate", title: request.title, time: new Date(time).toISOString(), attributes },
    actions,
    mitigations,
  };
}

if (import.meta.url === `file://${process.argv[1]}`) main(process.argv.slice(2));
