import type { OrganizationCatalog } from "@pes/config";
import { JsonText, PlaybookList } from "@pes/contracts";
import { organizationRoute, type Route } from "./route.js";

/** `GET /playbook`: the caller's organization's playbooks, serialized once per organization. */
export function playbookRoutes(): Route[] {
  const serialized = new WeakMap<OrganizationCatalog, JsonText>();
  return [
    organizationRoute({
      method: "get",
      path: "/playbook",
      auth: "organization",
      operation: {
        operationId: "listPlaybooks",
        summary: "List the playbooks available to the caller's organization",
        responses: { 200: { description: "The organization's playbooks.", body: PlaybookList } },
      },
      handle: ({ caller }) => {
        let list = serialized.get(caller.org);
        if (list === undefined) {
          list = JsonText.of(caller.org.playbookList);
          serialized.set(caller.org, list);
        }
        return list;
      },
    }),
  ];
}
