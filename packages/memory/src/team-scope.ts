import { createHash } from "node:crypto";

/**
 * Who may be shown a remembered execution: one without teams is the whole organization's; one with
 * teams only a caller of one of them. A caller without teams sees the organization's alone. The one rule
 * of team isolation in recall: the index is split by scope (the execution's teams, sorted) and recall reads
 * only the scopes this allows (scripts/recall-candidates.lua says it again, over the scopes' list), then
 * checks each recalled execution with it again.
 */
export function visibleTo(storedTeams: readonly string[] | undefined, callerTeams: readonly string[] | undefined): boolean {
  if (storedTeams === undefined || storedTeams.length === 0) return true;
  if (callerTeams === undefined || callerTeams.length === 0) return false;
  return storedTeams.some((team) => callerTeams.includes(team));
}

/** The organization's own scope, of executions without teams. */
export const ORGANIZATION_SCOPE = "-";

/** A scope as kept in the organization's list of scopes: `-`, or its teams as sorted JSON. */
export function scopeOf(teams: readonly string[] | undefined): string {
  return teams === undefined || teams.length === 0 ? ORGANIZATION_SCOPE : JSON.stringify([...new Set(teams)].sort());
}

/** A scope as it appears in key names: short and of safe characters whatever the teams are called. */
export function scopeTag(scope: string): string {
  return scope === ORGANIZATION_SCOPE ? scope : shortHash(scope);
}

/** 72 bits of SHA-256 in base64url: a part's or a scope's name in keys. */
export function shortHash(text: string): string {
  const known = hashes.get(text);
  if (known !== undefined) return known;
  const hash = createHash("sha256").update(text).digest("base64url").slice(0, 12);
  // The same parts, groups and scopes come back with every execution of a service: their hashes are kept, a bounded few.
  if (hashes.size >= MAX_HASHES_KEPT) hashes.clear();
  hashes.set(text, hash);
  return hash;
}

const MAX_HASHES_KEPT = 1_024;
const hashes = new Map<string, string>();
