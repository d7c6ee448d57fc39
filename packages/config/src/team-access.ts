import type { DataSource } from "@pes/connectors/schemas";
import { createMonitorNameMatcher, type PlaybookDefinition } from "@pes/playbooks";
import type { OrganizationCatalog } from "./catalog.js";

/*
 * Teams inside an organization, in one place: which playbooks a caller may run, which teams an
 * execution ran for, and who may read what it left (executions, batches, evidence, charts). Every read
 * path asks visibleTo; every route that resolves a playbook resolves it in organizationFor's view.
 */

/** What a caller is, for teams: the teams its token names, and whether it is an admin of its organization. */
export interface TeamScope {
  teams: readonly string[];
  orgAdmin: boolean;
}

/**
 * Who may see an object (an execution, a batch, an evidence bundle, a chart) that ran for `ownerTeams`:
 * an admin of the organization sees all of it; a caller sees an object one of its teams ran for; a
 * caller of no team sees the objects that ran for no team (of playbooks open to every team). An object
 * written before teams existed has no owner teams: it reads as one that ran for no team. The
 * organization is checked before this (its keys are the organization's): a caller never reaches
 * another organization's objects.
 */
export function visibleTo(caller: TeamScope, ownerTeams: readonly string[] | undefined): boolean {
  if (caller.orgAdmin) return true;
  const owners = ownerTeams ?? [];
  if (owners.length === 0) return caller.teams.length === 0;
  return owners.some((team) => caller.teams.includes(team));
}

/**
 * The teams that may run a playbook: those its `teams` names that every data source its actions read
 * allows too (each absent: every team). Undefined: every team, and callers of no team, may run it.
 * Configuration loading refuses a playbook for which this is empty (teamProblems).
 */
export function playbookTeams(definition: PlaybookDefinition, dataSources: ReadonlyMap<string, DataSource>): readonly string[] | undefined {
  let allowed: readonly string[] | undefined = definition.teams;
  const read = new Set(definition.gadgets.flatMap((gadget) => gadget.actions.map((action) => action.dataSource)));
  for (const name of read) {
    const teams = dataSources.get(name)?.teams;
    if (teams === undefined) continue;
    allowed = allowed === undefined ? [...teams] : allowed.filter((team) => teams.includes(team));
  }
  return allowed === undefined ? undefined : [...new Set(allowed)];
}

/** Whether the caller may run a playbook that `allowed` teams may run (playbookTeams). */
export function mayRun(caller: TeamScope, allowed: readonly string[] | undefined): boolean {
  return caller.orgAdmin || allowed === undefined || allowed.some((team) => caller.teams.includes(team));
}

/**
 * The teams an execution of a playbook ran for: the caller's teams the playbook allows (all of them for
 * a playbook open to every team). An admin of none of the allowed teams runs it for all of them, so that
 * its execution is never left to callers of no team. Sorted: it is part of what makes executions identical.
 */
export function ownerTeams(caller: TeamScope, allowed: readonly string[] | undefined): string[] {
  if (allowed === undefined) return [...new Set(caller.teams)].sort();
  const mine = allowed.filter((team) => caller.teams.includes(team));
  return [...new Set(mine.length > 0 ? mine : allowed)].sort();
}

/** Each organization's playbooks' allowed teams, computed once. */
const allowedByOrganization = new WeakMap<OrganizationCatalog, ReadonlyMap<string, readonly string[] | undefined>>();

/** The teams that may run each playbook of the organization (playbookTeams), by name. */
export function allowedTeamsOf(org: OrganizationCatalog): ReadonlyMap<string, readonly string[] | undefined> {
  let allowed = allowedByOrganization.get(org);
  if (allowed === undefined) {
    allowed = new Map([...org.playbooks].map(([name, definition]) => [name, playbookTeams(definition, org.dataSources)]));
    allowedByOrganization.set(org, allowed);
  }
  return allowed;
}

/** Views of an organization by the set of playbooks they hold: as many as distinct sets, not as callers. */
const views = new WeakMap<OrganizationCatalog, Map<string, OrganizationCatalog>>();

/**
 * The organization as a caller sees it: only the playbooks it may run, in the list, the matcher and by
 * name. A playbook it may not run is unknown to it, exactly like one that does not exist (resolving it
 * by name or by title gives the same 400), so its existence is not revealed. The same object for every
 * caller who may run the same playbooks.
 */
export function organizationFor(caller: TeamScope, org: OrganizationCatalog): OrganizationCatalog {
  const allowed = allowedTeamsOf(org);
  return viewOf(
    org,
    [...org.playbooks.keys()].filter((name) => mayRun(caller, allowed.get(name))),
  );
}

/**
 * The organization with only the playbooks that run for exactly `teams` (an execution's owner teams):
 * open to every team, or, for some teams, allowing all of them. How the worker identifies a playbook
 * from a chat message for a caller whose request named none (MessageExecutionJob's `teams`).
 */
export function organizationRunningFor(teams: readonly string[], org: OrganizationCatalog): OrganizationCatalog {
  const allowed = allowedTeamsOf(org);
  return viewOf(
    org,
    [...org.playbooks.keys()].filter((name) => {
      const teamsOf = allowed.get(name);
      return teamsOf === undefined || (teams.length > 0 && teams.every((team) => teamsOf.includes(team)));
    }),
  );
}

/** The organization with only the playbooks named in `runnable` (the same object for the same names). */
function viewOf(org: OrganizationCatalog, runnable: readonly string[]): OrganizationCatalog {
  if (runnable.length === org.playbooks.size) return org;
  let byRunnable = views.get(org);
  if (byRunnable === undefined) {
    byRunnable = new Map();
    views.set(org, byRunnable);
  }
  const key = JSON.stringify(runnable);
  let view = byRunnable.get(key);
  if (view === undefined) {
    const names = new Set(runnable);
    const definitions = [...org.playbooks.values()].filter((definition) => names.has(definition.name));
    view = {
      ...org,
      playbooks: new Map(definitions.map((definition) => [definition.name, definition])),
      playbookList: org.playbookList.filter((playbook) => names.has(playbook.name)),
      matcher: createMonitorNameMatcher(definitions),
    };
    byRunnable.set(key, view);
  }
  return view;
}

/** The owner teams of an execution of `bookName` for the caller (ownerTeams with the playbook's allowed teams). */
export function executionTeams(caller: TeamScope, org: OrganizationCatalog, bookName: string): string[] {
  return ownerTeams(caller, allowedTeamsOf(org).get(bookName));
}

/**
 * Playbooks no team may run: their `teams` and their data sources' `teams` have none in common. Only an
 * admin could run one, and its execution would belong to no team: refused at load instead.
 */
export function teamProblems(
  playbooks: readonly { file: string; definition: PlaybookDefinition }[],
  dataSources: ReadonlyMap<string, DataSource>,
): { file: string; path: string[]; message: string }[] {
  return playbooks.flatMap(({ file, definition }) => {
    const allowed = playbookTeams(definition, dataSources);
    if (allowed === undefined || allowed.length > 0) return [];
    const narrowing = [...new Set(definition.gadgets.flatMap((gadget) => gadget.actions.map((action) => action.dataSource)))].filter(
      (name) => dataSources.get(name)?.teams !== undefined,
    );
    return [
      {
        file,
        path: definition.teams === undefined ? ["gadgets"] : ["teams"],
        message: `no team may run this playbook: its teams and those of its data sources (${narrowing.join(", ")}) have none in common`,
      },
    ];
  });
}
