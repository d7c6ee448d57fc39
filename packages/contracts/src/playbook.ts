import { z } from "zod";

/** An element of `GET /playbook`: what a caller needs to choose or trigger a playbook. */
export const Playbook = z
  .object({
    name: z.string(),
    monitorNames: z.array(z.string()),
    requiredAttributes: z.array(z.string()).optional(),
  })
  .meta({ id: "Playbook" });
export type Playbook = z.infer<typeof Playbook>;

export const PlaybookList = z.array(Playbook).meta({ id: "PlaybookList" });
export type PlaybookList = z.infer<typeof PlaybookList>;
