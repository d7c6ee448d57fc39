import { z } from "zod";
import { AlertmanagerAlert } from "./alert-webhook.js";
import { ValidationIssue } from "./errors.js";
import { checkExecutionRules, executionInputShape } from "./execution-input.js";

/**
 * The body of `POST /playbook/match`: an execution body, or `{ alert }` with one alert as Alertmanager's
 * webhook sends it. One strict object plus rules, like PlaybookExecutionInput, so that each broken rule
 * is its own issue. A message link is refused: the dry-run reads no chat message.
 */
export const PlaybookMatchInput = z
  .strictObject({
    ...executionInputShape,
    alert: AlertmanagerAlert.optional().meta({
      description: "An alert as Alertmanager's webhook sends it: what `POST /webhooks/alertmanager` would do with it.",
    }),
  })
  .superRefine((input, ctx) => {
    const { alert, ...execution } = input;
    if (alert !== undefined) {
      for (const [key, value] of Object.entries(execution)) {
        if (value !== undefined) {
          ctx.addIssue({ code: "custom", path: [key], message: `${key} cannot be combined with alert: the alert is the whole issue` });
        }
      }
      return;
    }
    if (input.messageLink !== undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["messageLink"],
        message: "the dry-run reads no chat message: pass the message's title (and its labels as attributes) instead",
      });
      return;
    }
    checkExecutionRules(execution, ctx);
  })
  .meta({
    id: "PlaybookMatchInput",
    description: "A PlaybookExecutionInput (without messageLink), or `{ alert }`: an alert as Alertmanager's webhook sends it. Nothing runs.",
  });
export type PlaybookMatchInput = z.infer<typeof PlaybookMatchInput>;

/** Where a text tried against the monitor names came from. */
export const TitleSource = z.enum(["title", "labels.alertname", "annotations.summary"]);
export type TitleSource = z.infer<typeof TitleSource>;

/** What one monitor name made of one text. */
export const MonitorNameVerdict = z
  .object({
    bookName: z.string(),
    monitorName: z.string(),
    verdict: z.enum(["chosen", "outranked", "no_match"]).meta({
      description: "`chosen`: it identifies the playbook; `outranked`: it matches too, but another is more specific or comes first.",
    }),
    reason: z.string().meta({ description: "Why, in words: the text that did not match, or what outranked it." }),
    captured: z.record(z.string(), z.string()).optional().meta({ description: "What its placeholders captured, when it matches." }),
  })
  .meta({ id: "MonitorNameVerdict" });
export type MonitorNameVerdict = z.infer<typeof MonitorNameVerdict>;

/** One text tried against the monitor names, in order, until one matched. */
export const TriedTitle = z
  .object({
    source: TitleSource,
    text: z.string(),
    matched: z.boolean(),
    monitorNames: z.array(MonitorNameVerdict),
  })
  .meta({ id: "TriedTitle" });
export type TriedTitle = z.infer<typeof TriedTitle>;

export const AttributeSource = z.enum(["title", "labels", "explicit"]);
export type AttributeSource = z.infer<typeof AttributeSource>;

/** The 200 body of `POST /playbook/match`: what an execution of the body would run, and why. */
export const PlaybookMatchResult = z
  .object({
    wouldRun: z.boolean().meta({ description: "True when the execution would start: `issues` is empty." }),
    issues: z.array(ValidationIssue).meta({
      description: "What the execution would refuse (a 400 of `POST /playbook/execution`, an `unmatched` alert of the webhook).",
    }),
    bookName: z.string().optional().meta({ description: "The playbook that would run." }),
    chosenBy: z.enum(["bookName", "monitorName"]).optional(),
    monitorName: z.string().optional().meta({ description: "The monitor name that matched, when one did." }),
    titles: z.array(TriedTitle).meta({
      description:
        "The texts tried against the monitor names, in order (an alert's alertname, then its summary), each with every " +
        "monitor name's verdict; with bookName, only that playbook's monitor names.",
    }),
    attributes: z
      .record(z.string(), z.object({ value: z.string(), source: AttributeSource }))
      .meta({ description: "The attributes the execution would run with, and where each came from (the later source wins)." }),
    ignoredLabels: z
      .array(z.object({ name: z.string(), reason: z.string() }))
      .optional()
      .meta({ description: "An alert's labels that would not become attributes, and why." }),
    requiredAttributes: z.array(z.string()),
    missingAttributes: z.array(z.string()),
    time: z.string().meta({ description: "The issue time that would be used, ISO 8601 UTC." }),
    timeSource: z.enum(["explicit", "startsAt", "now"]),
  })
  .meta({ id: "PlaybookMatchResult" });
export type PlaybookMatchResult = z.infer<typeof PlaybookMatchResult>;
