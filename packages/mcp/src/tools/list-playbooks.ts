import { PlaybookList } from "@pes/contracts";
import { z } from "zod";
import { defineTool } from "./pes-tool.js";

export const listPlaybooks = defineTool({
  name: "list_playbooks",
  title: "List playbooks",
  description:
    "List the playbooks your organization can run: each one's name, what it investigates and the monitor (alert) names " +
    "it answers to. Call it first when you do not know which playbook fits an issue; pass a name as `bookName` to " +
    "investigate_issue, or give investigate_issue the alert's `title` and let the service pick the playbook by its monitor names.",
  input: z.strictObject({}),
  output: z.object({ playbooks: PlaybookList }),
  readOnly: true,
  run: async (service) => ({ playbooks: await service.listPlaybooks() }),
});
