import { AuditListQuery, AuditPage, ErrorResponse } from "@pes/contracts";
import { visibleTo } from "@pes/config";
import { QueueUnavailableError, type AuditTrail } from "@pes/executions";
import type { Caller } from "../auth/authenticate.js";
import { AppError } from "../errors.js";
import { organizationRoute, type Route } from "./route.js";

export interface AuditRouteDeps {
  /** Where the workers append executions' audit records; none: every page is empty. */
  audit?: Pick<AuditTrail, "read">;
}

export const AUDIT_PATH = "/audit";

const NOT_AN_ADMIN =
  "Reading the audit trail needs an admin of the organization or a member of a team: the token grants neither the organization admin scope (AUTH_ORG_ADMIN_SCOPE) nor a team (AUTH_TEAMS_CLAIM)";

/** `GET /audit`: the organization's audit trail, for its admins. */
export function auditRoutes(deps: AuditRouteDeps): Route[] {
  return [
    organizationRoute({
      method: "get",
      path: AUDIT_PATH,
      auth: "organization",
      query: AuditListQuery,
      operation: {
        operationId: "listAuditRecords",
        summary: "Read the organization's audit trail: one record per finished execution, newest first",
        description:
          "For admins of the organization (a token granting AUTH_ORG_ADMIN_SCOPE). Each record says who asked (subject, client, " +
          "teams, entry point: route, alert webhook or chat link), the playbook and its version, every query as sent to each data " +
          "source (secrets elided), what was sent to Slack, Teams, PagerDuty, Opsgenie and the language model with its size, the " +
          "evidence bundle's hash, the conclusion and the budget spent. Page with `next` as `cursor`; filter by time, subject, " +
          "playbook or execution. A page may hold fewer than `limit` records and still have `next` when a filter is rare.",
        responses: {
          200: { description: "A page of records.", body: AuditPage },
          403: { description: "The caller is not an admin of its organization, or its client is not configured for it.", body: ErrorResponse },
        },
      },
      handle: ({ caller, query }) => readAudit(deps.audit, caller, query),
    }),
  ];
}

/**
 * The one way the audit trail is read: a page of the caller's organization's records (its own stream:
 * another organization's records are never read), for an admin of it only, with the filters asked.
 */
export async function readAudit(trail: Pick<AuditTrail, "read"> | undefined, caller: Caller, query: AuditListQuery): Promise<AuditPage> {
  // An admin reads every record of the organization; a member of teams, those of its teams' executions.
  if (!caller.orgAdmin && caller.teams.length === 0) throw new AppError("forbidden", NOT_AN_ADMIN);
  if (query.from !== undefined && query.to !== undefined && Date.parse(query.from) > Date.parse(query.to)) {
    throw new AppError("validation", [{ path: ["query", "from"], message: "from must not be after to" }]);
  }
  if (trail === undefined) return { records: [] };
  try {
    return await trail.read(caller.orgId, caller.orgAdmin ? query : { ...query, visible: (teams) => visibleTo(caller, teams) });
  } catch (error) {
    if (error instanceof QueueUnavailableError) throw new AppError("service_unavailable", "Service unavailable: the audit trail cannot be read");
    throw error;
  }
}
