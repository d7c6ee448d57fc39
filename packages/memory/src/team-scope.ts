import { createHash } from "node:crypto";

/**
 * Who may be shown a remembered execution: one without teams is the whole organization's; one with
 * teams only a caller of one of them. A caller without teams sees the organization's alone. The one rule
 * of team isolation in recall: the index is split by scope (the execution's teams, sorted) and recall reads
 * only the scopes this allows, then checks each recalled execution with it again.
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

/** The teams of a scope from the list (undefined: the organization's; a malformed entry is nobody's). */
export function teamsOfScope(scope: string): string[] | undefined | null {
  if (scope === ORGANIZATION_SCOPE) return undefined;
  try {
    const teams: unknown = JSON.parse(scope);
    return Array.isArray(teams) && teams.length > 0 && teams.every((team) => typeof team === "string") ? teams : null;
  } catch {
    return null;
  }
}

/** A scope as it appears in key names: short and of safe characters whatever the teams are called. */
export function scopeTag(scope: string): string {
  return scope === ORGANIZATION_SCOPE ? scope : shortHash(scope);
}

/** 72 bits of SHA-256 in base64url: a part's or a scope's name in keys. */
export function shortHash(text: string): string {
  return createHash("sha256").update(text).digest("base64url").slice(0, 12);
}
