import { z } from "zod";

/**
 * A team of an organization, as its identity provider names it in the token's teams claim
 * (AUTH_TEAMS_CLAIM) and as configuration names it in a playbook's or a data source's `teams`.
 */
export const TeamName = z.string().min(1).max(128);
export type TeamName = z.infer<typeof TeamName>;

/**
 * Which teams of the organization may run a playbook or read a data source: at least one (leave the
 * field out to let every team, and callers of no team, use it).
 */
export const AllowedTeams = z.array(TeamName).min(1, "name at least one team, or leave teams out to allow every team");
export type AllowedTeams = z.infer<typeof AllowedTeams>;

/**
 * The teams an execution (or batch, evidence bundle, chart) ran for: the caller's teams the playbook
 * allows. Empty: it ran for no team (a caller of no team, a playbook open to all).
 */
export const OwnerTeams = z.array(TeamName);
export type OwnerTeams = z.infer<typeof OwnerTeams>;
