import { executionTeams, organizationFor, ownerTeams, type OrganizationCatalog } from "@pes/config";
import type { Caller } from "./authenticate.js";

/**
 * The caller's organization as its teams see it: only the playbooks it may run (organizationFor). Every
 * route that names, matches or lists playbooks resolves them here, so that a playbook the caller may not
 * run is unknown to it, exactly like one that does not exist.
 */
export function callerOrganization(caller: Caller): OrganizationCatalog {
  return organizationFor(caller, caller.org);
}

/**
 * The teams an execution of `bookName` runs for (executionTeams). Without a playbook yet (a message link
 * the worker reads), the caller's teams: the worker then picks only among playbooks that run for exactly
 * those (MessageExecutionJob's `teams`).
 */
export function requestTeams(caller: Caller, bookName: string | undefined): string[] {
  return bookName === undefined ? ownerTeams(caller, undefined) : executionTeams(caller, caller.org, bookName);
}

/**
 * An Idempotency-Key as the organization keeps it: per set of teams (and admin or not), so that one team
 * reusing another's key neither joins nor learns of the other's execution.
 */
export function teamScopedKey(caller: Caller, key: string): string {
  const teams = [...new Set(caller.teams)].sort();
  return teams.length === 0 && !caller.orgAdmin ? key : `${JSON.stringify([caller.orgAdmin ? "admin" : "member", ...teams])}${key}`;
}

/**
 * The teams an async batch runs for: those every one of its items runs for, so that whoever reads the
 * batch's pages may read each item's result. None (only invalid items): the caller's. Undefined when its
 * items run for teams with none in common (playbooks of different teams): the caller splits it by team.
 */
export function batchTeams(caller: Caller, items: readonly { teams?: readonly string[] }[]): string[] | undefined {
  if (items.length === 0) return ownerTeams(caller, undefined);
  const sets = items.map((item) => item.teams ?? []);
  const [first = [], ...rest] = sets;
  const common = first.filter((team) => rest.every((teams) => teams.includes(team)));
  if (common.length === 0 && sets.some((teams) => teams.length > 0)) return undefined;
  return common;
}
