import { PlaybookMatchInput, PlaybookMatchResult } from "@pes/contracts";
import { explainAlert, explainExecution } from "@pes/playbooks";
import { callerOrganization } from "../auth/team-requests.js";
import { organizationRoute, type Route } from "./route.js";

export interface MatchRouteDeps {
  allowedChatHosts: readonly string[];
  now: () => Date;
}

/**
 * `POST /playbook/match`: the dry-run. It resolves an execution body, or an alert as the webhook
 * would, and answers what would run and why; it enqueues nothing and reads nothing but configuration.
 */
export function matchRoutes(deps: MatchRouteDeps): Route[] {
  return [
    organizationRoute({
      method: "post",
      path: "/playbook/match",
      auth: "organization",
      body: PlaybookMatchInput,
      operation: {
        operationId: "matchPlaybook",
        summary: "Dry-run: which playbook an execution body or an alert would run, with which attributes and time",
        description:
          "Runs nothing. Answers the playbook, the monitor name that matched and every other monitor name's reason for not " +
          "being chosen, the attributes and their sources, the required attributes still missing and the issue time. `issues` " +
          "lists what `POST /playbook/execution` would answer with a 400 (or, for an alert, why the webhook would start nothing).",
        responses: { 200: { description: "What would run, and why.", body: PlaybookMatchResult } },
      },
      handle: ({ caller, body }) => {
        const { alert, ...input } = body;
        const now = deps.now();
        const organization = callerOrganization(caller);
        if (alert !== undefined) return explainAlert(alert, organization, now);
        return explainExecution(input, organization, { now, allowedChatHosts: deps.allowedChatHosts });
      },
    }),
  ];
}
