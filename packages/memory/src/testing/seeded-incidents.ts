import type { Verdict, VerdictFinding } from "@pes/contracts";
import type { RememberedExecution } from "../fingerprint.js";

/** A deterministic pseudo-random source (mulberry32): the same seed gives the same history. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

type Random = () => number;

const ALPHABET = "bcdfghjklmnpqrstvwxz2456789";
function pick<T>(random: Random, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)] as T;
}
function generated(random: Random, length: number): string {
  return Array.from({ length }, () => pick(random, [...ALPHABET])).join("");
}
/** A Deployment's pod name: `<deployment>-<template hash>-<suffix>`, as Kubernetes makes them. */
function podOf(random: Random, deployment: string): string {
  return `${deployment}-${generated(random, 10)}-${generated(random, 5)}`;
}
function int(random: Random, low: number, high: number): number {
  return low + Math.floor(random() * (high - low + 1));
}
function hex(random: Random, length: number): string {
  return Array.from({ length }, () => pick(random, [..."0123456789abcdef"])).join("");
}

/** One kind of incident: its cause's kind and subject (as a recall should name them), and how to make one. */
export interface IncidentType {
  name: string;
  causeKind: string;
  /** The subject as normalised (what recall compares). */
  causeSubject: string;
  teams?: readonly string[];
  make(random: Random, at: Date): { playbook: string; attributes: Record<string, string>; verdict: Verdict };
}

const finding = (kind: string, action: string, extra: Partial<VerdictFinding> = {}): VerdictFinding => ({ kind, action, ...extra });
const emptyVerdict = { background: [], ruledOut: [], normal: [], unchecked: [] };

/** Noise a real incident carries besides its own symptoms: one of these, sometimes. */
function noise(random: Random): VerdictFinding[] {
  if (random() < 0.6) return [];
  return [
    pick(random, [
      finding("rise", "p99 latency of frontend"),
      finding("warning-event", "Warnings in the namespace", {
        subject: `pod/${podOf(random, "batch-report")}`,
        detail: `BackOff: restarting failed container ${int(random, 1, 9)} times`,
      }),
      finding("log-pattern", "Error logs", {
        detail: `level=warn msg="slow request" path=/api/items/${int(random, 1, 99999)} took=${int(random, 100, 900)}ms`,
      }),
    ]),
  ];
}
/** Sometimes a symptom is missed (no data, another window). */
function some(random: Random, findings: VerdictFinding[]): VerdictFinding[] {
  return findings.filter((_, index) => index === 0 || random() > 0.2);
}

/** Twelve kinds of incident of an online shop, several of them paged by the same alert of the same service. */
export const INCIDENT_TYPES: readonly IncidentType[] = [
  {
    name: "bad deploy of checkout",
    causeKind: "deploy",
    causeSubject: "checkout",
    teams: ["payments"],
    make: (random) => ({
      playbook: "high-error-rate",
      attributes: { service: "checkout", namespace: "shop" },
      verdict: {
        conclusion: "cause",
        cause: { kind: "deploy", subject: "checkout", detail: `checkout:v1.${int(random, 30, 60)}`, action: "Rollouts of checkout", confidence: "high" },
        symptoms: [
          ...some(random, [
            finding("log-pattern", "Error logs of checkout", {
              detail: `level=error msg="payment capture failed" err="java.lang.NullPointerException" order_id=${int(random, 10000, 99999)} trace_id=${hex(random, 16)}`,
            }),
            finding("rise", "Error ratio of checkout"),
          ]),
          ...noise(random),
        ],
        paged: [finding("alert", "Alerts firing for checkout", { subject: "service=checkout", detail: "CheckoutHighErrorRate" })],
        ...emptyVerdict,
      },
    }),
  },
  {
    name: "orders failing upstream of checkout",
    causeKind: "upstream",
    causeSubject: "orders",
    teams: ["payments"],
    make: (random) => ({
      playbook: "high-error-rate",
      attributes: { service: "checkout", namespace: "shop" },
      verdict: {
        conclusion: "cause",
        cause: { kind: "upstream", subject: "orders", action: "Error ratio of orders", confidence: "high" },
        symptoms: [
          ...some(random, [
            finding("rise", "Error ratio of orders"),
            finding("log-pattern", "Error logs of checkout", {
              detail: `upstream connect error to orders:8080 after ${int(random, 1, 30)}s, request ${hex(random, 12)}`,
            }),
            finding("rise", "Error ratio of checkout"),
          ]),
          ...noise(random),
        ],
        paged: [finding("alert", "Alerts firing for checkout", { subject: "service=checkout", detail: "CheckoutHighErrorRate" })],
        ...emptyVerdict,
      },
    }),
  },
  {
    name: "payments provider down",
    causeKind: "outage",
    causeSubject: "dependency=payments-provider",
    teams: ["payments"],
    make: (random) => ({
      playbook: "high-error-rate",
      attributes: { service: "checkout", namespace: "shop" },
      verdict: {
        conclusion: "cause",
        cause: { kind: "outage", subject: "dependency=payments-provider", action: "Payments provider probe", confidence: "high" },
        symptoms: [
          ...some(random, [
            finding("outage", "Payments provider probe", { subject: "dependency=payments-provider" }),
            finding("log-pattern", "Error logs of checkout", {
              detail: `payment provider timeout after ${int(random, 1000, 5000)}ms (attempt ${int(random, 1, 3)})`,
            }),
            finding("rise", "Error ratio of checkout"),
          ]),
          ...noise(random),
        ],
        paged: [finding("alert", "Alerts firing for checkout", { subject: "service=checkout", detail: "CheckoutHighErrorRate" })],
        ...emptyVerdict,
      },
    }),
  },
  {
    name: "orders-db out of connections",
    causeKind: "saturation",
    causeSubject: "db=orders-db",
    make: (random) => ({
      playbook: "db-connections",
      attributes: { db: "orders-db" },
      verdict: {
        conclusion: "cause",
        cause: { kind: "saturation", subject: "db=orders-db", detail: "max_connections", action: "Connections of orders-db", confidence: "high" },
        symptoms: [
          ...some(random, [
            finding("saturation", "Connections of orders-db", { subject: "db=orders-db", detail: "max_connections" }),
            finding("rise", "Query latency of orders-db"),
          ]),
          ...noise(random),
        ],
        paged: [finding("alert", "Alerts firing for orders-db", { subject: "db=orders-db", detail: "PostgresTooManyConnections" })],
        ...emptyVerdict,
      },
    }),
  },
  {
    name: "recommendations OOM-killed",
    causeKind: "oom",
    causeSubject: "pod/recommendations",
    make: (random) => {
      const pod = podOf(random, "recommendations");
      return {
        playbook: "memory-pressure",
        attributes: { node: `node-${int(random, 1, 3)}` },
        verdict: {
          conclusion: "cause",
          cause: {
            kind: "oom",
            subject: `pod/${pod}`,
            detail: `OOMKilled: container recommendations exceeded ${int(random, 256, 1024)}Mi`,
            action: "Warnings on the node",
            confidence: "high",
          },
          symptoms: [
            ...some(random, [
              finding("oom", "Warnings on the node", { subject: `pod/${pod}` }),
              finding("crash-loop", "Warnings on the node", { subject: `pod/${pod}`, detail: "BackOff" }),
            ]),
            ...noise(random),
          ],
          ...emptyVerdict,
        },
      };
    },
  },
  {
    name: "slow node-2",
    causeKind: "node",
    causeSubject: "node/node-2",
    teams: ["search"],
    make: (random) => ({
      playbook: "slow-pods",
      attributes: { service: "catalog", namespace: "shop" },
      verdict: {
        conclusion: "cause",
        cause: { kind: "node", subject: "node/node-2", action: "Node alerts", confidence: "high" },
        symptoms: [
          ...some(random, [
            finding("alert", "Node alerts", { subject: "node=node-2", detail: "NodeDiskIOSaturation" }),
            finding("rise", "p99 latency of catalog", { subject: `pod=${podOf(random, "catalog")}` }),
            finding("rise", "I/O wait of node-2", { subject: `instance=10.0.${int(random, 0, 9)}.${int(random, 2, 250)}:9100` }),
          ]),
          ...noise(random),
        ],
        ...emptyVerdict,
      },
    }),
  },
  {
    name: "search at its CPU limit",
    causeKind: "saturation",
    causeSubject: "service=search",
    teams: ["search"],
    make: (random) => ({
      playbook: "high-latency",
      attributes: { service: "search", namespace: "shop" },
      verdict: {
        conclusion: "cause",
        cause: { kind: "saturation", subject: "service=search", detail: `cpu limit ${int(random, 1, 4)} cores`, action: "CPU of search", confidence: "high" },
        symptoms: [
          ...some(random, [
            finding("saturation", "CPU of search", { subject: "service=search" }),
            finding("rise", "Requests of search"),
            finding("rise", "p99 latency of search"),
          ]),
          ...noise(random),
        ],
        paged: [finding("alert", "Alerts firing for search", { subject: "service=search", detail: "SearchHighLatency" })],
        ...emptyVerdict,
      },
    }),
  },
  {
    name: "bad deploy of search",
    causeKind: "deploy",
    causeSubject: "search",
    teams: ["search"],
    make: (random) => ({
      playbook: "high-latency",
      attributes: { service: "search", namespace: "shop" },
      verdict: {
        conclusion: "cause",
        cause: {
          kind: "deploy",
          subject: "search",
          detail: `search:v2.${int(random, 1, 40)}.${int(random, 0, 9)}`,
          action: "Rollouts of search",
          confidence: "high",
        },
        symptoms: [
          ...some(random, [
            finding("rise", "p99 latency of search"),
            finding("log-pattern", "Error logs of search", { detail: `slow query on index products_${int(random, 1, 9)}: ${int(random, 900, 3000)}ms` }),
          ]),
          ...noise(random),
        ],
        paged: [finding("alert", "Alerts firing for search", { subject: "service=search", detail: "SearchHighLatency" })],
        ...emptyVerdict,
      },
    }),
  },
  {
    name: "cart crash-looping",
    causeKind: "crash-loop",
    causeSubject: "pod/cart",
    make: (random) => {
      const pod = podOf(random, "cart");
      return {
        playbook: "high-error-rate",
        attributes: { service: "cart", namespace: "shop" },
        verdict: {
          conclusion: "cause",
          cause: {
            kind: "crash-loop",
            subject: `pod/${pod}`,
            detail: `BackOff: Back-off restarting failed container cart in pod ${pod}`,
            action: "Warnings of cart",
            confidence: "high",
          },
          symptoms: [
            ...some(random, [finding("crash-loop", "Warnings of cart", { subject: `pod/${pod}` }), finding("rise", "Error ratio of cart")]),
            ...noise(random),
          ],
          paged: [finding("alert", "Alerts firing for cart", { subject: "service=cart", detail: "CartHighErrorRate" })],
          ...emptyVerdict,
        },
      };
    },
  },
  {
    name: "adservice image not found",
    causeKind: "image-pull/not-found",
    causeSubject: "pod/adservice",
    make: (random) => {
      const pod = podOf(random, "adservice");
      const version = `v0.${int(random, 1, 20)}.${int(random, 0, 9)}`;
      return {
        playbook: "pods-not-ready",
        attributes: { service: "adservice", namespace: "shop" },
        verdict: {
          conclusion: "cause",
          cause: {
            kind: "image-pull/not-found",
            subject: `pod/${pod}`,
            detail: `Failed: Failed to pull image "registry.example.com/adservice:${version}": not found`,
            action: "State of shop",
            confidence: "high",
          },
          symptoms: [
            ...some(random, [finding("image-pull/not-found", "State of shop", { subject: `pod/${pod}` }), finding("drop", "Ready pods of adservice")]),
            ...noise(random),
          ],
          ...emptyVerdict,
        },
      };
    },
  },
  {
    name: "pods evicted on disk pressure",
    causeKind: "eviction",
    causeSubject: "pod/frontend",
    make: (random) => {
      const pod = podOf(random, "frontend");
      return {
        playbook: "pods-not-ready",
        attributes: { service: "frontend", namespace: "shop" },
        verdict: {
          conclusion: "cause",
          cause: {
            kind: "eviction",
            subject: `pod/${pod}`,
            detail: `Evicted: The node was low on resource: ephemeral-storage. Threshold quantity: ${int(random, 1, 9)}Gi, available: ${int(random, 100, 900)}Mi.`,
            action: "Warnings of frontend",
            confidence: "high",
          },
          symptoms: [
            ...some(random, [finding("eviction", "Warnings of frontend", { subject: `pod/${pod}` }), finding("drop", "Ready pods of frontend")]),
            ...noise(random),
          ],
          ...emptyVerdict,
        },
      };
    },
  },
  {
    name: "payments config change",
    causeKind: "config",
    causeSubject: "payments",
    teams: ["payments"],
    make: (random) => ({
      playbook: "high-error-rate",
      attributes: { service: "payments", namespace: "shop" },
      verdict: {
        conclusion: "cause",
        cause: {
          kind: "config",
          subject: "payments",
          detail: `payments-config revision ${int(random, 10, 400)}`,
          action: "Config changes of payments",
          confidence: "high",
        },
        symptoms: [
          ...some(random, [
            finding("rise", "Error ratio of payments"),
            finding("log-pattern", "Error logs of payments", { detail: `invalid merchant id ${int(random, 1000, 9999)} in request ${hex(random, 24)}` }),
          ]),
          ...noise(random),
        ],
        paged: [finding("alert", "Alerts firing for payments", { subject: "service=payments", detail: "PaymentsHighErrorRate" })],
        ...emptyVerdict,
      },
    }),
  },
];

/** One seeded execution of an incident type. */
export interface SeededExecution extends RememberedExecution {
  type: IncidentType;
}

/** `count` executions of random types, at random times in the `days` before `now`, with ids `<prefix>-<n>`. */
export function seededExecutions(
  random: Random,
  options: { count: number; now: number; days: number; prefix: string; types?: readonly IncidentType[] },
): SeededExecution[] {
  const types = options.types ?? INCIDENT_TYPES;
  return Array.from({ length: options.count }, (_, index) => {
    const type = pick(random, types);
    const at = new Date(options.now - Math.floor(random() * options.days * 86_400_000));
    const made = type.make(random, at);
    return {
      type,
      executionId: `${options.prefix}-${index}`,
      playbook: made.playbook,
      at,
      attributes: made.attributes,
      verdict: made.verdict,
      ...(type.teams === undefined ? {} : { teams: type.teams }),
      pageUrl: `https://pes.example.com/executions/${options.prefix}-${index}/page`,
    };
  });
}
