import type { OrganizationCatalog } from "@pes/config";
import { organizationRoute, PreSerialized, type Route } from "./route.js";

/** `GET /playbook`: the caller's organization's playbooks, serialized once per organization. */
export function playbookRoutes(): Route[] {
  const serialized = new WeakMap<OrganizationCatalog, PreSerialized>();
  return [
    organizationRoute({
      method: "get",
      path: "/playbook",
      auth: "organization",
      handle: ({ caller }) => {
        let list = serialized.get(caller.org);
        if (list === undefined) {
          list = new PreSerialized(JSON.stringify(caller.org.playbookList));
          serialized.set(caller.org, list);
        }
        return list;
      },
    }),
  ];
}
