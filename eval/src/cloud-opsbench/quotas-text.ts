import type { ResourceQuota } from "@pes/contracts";
import { describeFields, parseTable, value } from "./kubectl-text.js";

/** `kubectl describe resourcequota <name>`: its `Resource Used Hard` table as `status.used` and `status.hard`. */
export function parseQuotaDescribe(text: string): ResourceQuota | undefined {
  const fields = describeFields(text);
  const name = value(fields, "Name");
  if (name === undefined) return undefined;
  const namespace = value(fields, "Namespace");
  const used: Record<string, string> = {};
  const hard: Record<string, string> = {};
  for (const row of parseTable(text, /^\s*Resource\s+Used\s+Hard/)) {
    if (row.Resource === undefined || row.Resource === "") continue;
    if (row.Used !== undefined) used[row.Resource] = row.Used;
    if (row.Hard !== undefined) hard[row.Resource] = row.Hard;
  }
  return { metadata: { name, ...(namespace === undefined ? {} : { namespace }) }, spec: { hard }, status: { hard, used } };
}

/**
 * `kubectl get resourcequota` (NAME AGE REQUEST LIMIT, `requests.cpu: 10/1, pods: 3/10`) as quotas,
 * for those not described.
 */
export function quotasOfTable(text: string, namespace: string): ResourceQuota[] {
  return parseTable(text, /^NAME\s+AGE/).flatMap((row): ResourceQuota[] => {
    const name = row.NAME;
    if (name === undefined || name === "") return [];
    const used: Record<string, string> = {};
    const hard: Record<string, string> = {};
    for (const cell of [row.REQUEST ?? "", row.LIMIT ?? ""]) {
      for (const match of cell.matchAll(/([\w./-]+):\s*([^/,\s]+)\/([^,\s]+)/g)) {
        used[match[1] ?? ""] = match[2] ?? "";
        hard[match[1] ?? ""] = match[3] ?? "";
      }
    }
    return [{ metadata: { name, namespace }, spec: { hard }, status: { hard, used } }];
  });
}
