import { z } from "zod";

/**
 * An alert of `GET /api/v2/alerts` (Alertmanager's OpenAPI `gettableAlert`), with the fields this
 * connector reads; others are ignored.
 */
export const GettableAlert = z.object({
  labels: z.record(z.string(), z.string()),
  startsAt: z.iso.datetime({ offset: true }),
  endsAt: z.iso.datetime({ offset: true }),
});
export type GettableAlert = z.infer<typeof GettableAlert>;
export const GettableAlerts = z.array(GettableAlert);

/** A silence of `GET /api/v2/silences` (`gettableSilence`). */
export const GettableSilence = z.object({
  id: z.string(),
  startsAt: z.iso.datetime({ offset: true }),
  endsAt: z.iso.datetime({ offset: true }),
  createdBy: z.string(),
  comment: z.string(),
  status: z.object({ state: z.enum(["expired", "active", "pending"]) }),
});
export type GettableSilence = z.infer<typeof GettableSilence>;
export const GettableSilences = z.array(GettableSilence);
