import type { OrganizationCatalog } from "@pes/config";
import { JsonText, PlaybookList } from "@pes/contracts";
import { callerOrganization } from "../auth/team-requests.js";
import { organizationRoute, type Route } from "./route.js";

/** `GET /playbook`: the playbooks the caller may run, serialized once per view of its organization (callerOrganization). */
export function playbookRoutes(): Route[] {
  const serialized = new WeakMap<OrganizationCatalog, JsonText>();
  return [
    organizationRoute({
      method: "get",
      path: "/playbook",
      auth: "organization",
      operation: {
        operationId: "listPlaybooks",
        summary: "List the playbooks the caller may run: its organization's, open to every team or to one of its teams",
        responses: { 200: { description: "The organization's playbooks.", body: PlaybookList } },
      },
      handle: ({ caller }) => {
        const organization = callerOrganization(caller);
        let list = serialized.get(organization);
        if (list === undefined) {
          list = JsonText.of(organization.playbookList);
          serialized.set(organization, list);
        }
        return list;
      },
    }),
  ];
}
