import { GettableAlert, GettableSilence } from "@pes/contracts";
import { z } from "zod";

/** The answer of `GET /api/v2/alerts` (Alertmanager's OpenAPI `gettableAlerts`), with the fields that are read. */
export const GettableAlerts = z.array(GettableAlert);

/** The answer of `GET /api/v2/silences` (`gettableSilences`). */
export const GettableSilences = z.array(GettableSilence);
