import { FeedbackInput, type FeedbackAuthor } from "@pes/contracts";
import type { createSlackPostClient } from "@pes/integrations/slack-feedback";
import type { Logger } from "@pes/logger";
import { checkFeedbackReference } from "@pes/signed-links";
import express from "express";
import { z } from "zod";
import { AppError } from "../errors.js";
import type { Feedback } from "../feedback/feedback.js";
import type { SignatureLedger } from "../feedback/signature-ledger.js";
import { checkSlackSignature, SLACK_TIMESTAMP_WINDOW_SECONDS } from "../feedback/slack-signature.js";
import { HttpReply, publicRoute, type Route } from "./route.js";

/** Where a Slack app's interactivity requests come (its Request URL is `<PUBLIC_URL>` and this path). */
export const SLACK_INTERACTIVITY_PATH = "/integrations/slack/interactivity";

/** An organization's Slack app as the API answers its interactions: its signing secret and a client for its bot token. */
export interface SlackApp {
  signingSecret: string;
  client: ReturnType<typeof createSlackPostClient>;
}

export interface SlackInteractivityDeps {
  feedback: Feedback;
  /** LINK_SIGNING_SECRET: the buttons' references are signed with it; without it, every request is refused. */
  linkSigningSecret: string | undefined;
  /** By organization id: those whose `slack:` has a `signingSecret`. */
  slackApps: ReadonlyMap<string, SlackApp>;
  ledger: SignatureLedger;
  logger: Logger;
  now: () => Date;
}

/** A payload is a message's blocks and some ids: far below this. */
const BODY_LIMIT_BYTES = 256 * 1024;
/** Slack waits 3 seconds for an answer (and a trigger_id lives as long): Slack's calls must end before. */
const SLACK_CALLS_MS = 2_000;

const User = z.object({ id: z.string(), username: z.string().optional(), name: z.string().optional() });
const BlockActions = z.object({
  type: z.literal("block_actions"),
  user: User,
  trigger_id: z.string().optional(),
  container: z.object({ channel_id: z.string().optional(), message_ts: z.string().optional(), thread_ts: z.string().optional() }).optional(),
  channel: z.object({ id: z.string() }).optional(),
  message: z.object({ ts: z.string(), thread_ts: z.string().optional(), blocks: z.array(z.unknown()).optional() }).optional(),
  actions: z.array(z.object({ action_id: z.string(), value: z.string().optional() })).min(1),
});
const ViewSubmission = z.object({
  type: z.literal("view_submission"),
  user: User,
  view: z.object({ callback_id: z.string(), private_metadata: z.string(), state: z.object({ values: z.unknown() }) }),
});
const ModalTarget = z.object({ reference: z.string(), channel: z.string(), ts: z.string(), threadTs: z.string().optional() });
const Interaction = z.discriminatedUnion("type", [BlockActions, ViewSubmission]);

/**
 * `POST /integrations/slack/interactivity`: the feedback buttons under a result posted to Slack, and the
 * modal they open. Refused with 401, recording nothing: a request without Slack's signature, with a
 * signature that does not match the app's signing secret, a timestamp more than 5 minutes off, or a
 * signature already accepted (a replay). The organization and the execution come only from the signed
 * reference the button carries (the organization's app must then have signed the request); the person
 * who answered is the Slack user.
 */
export function slackInteractivityRoutes(deps: SlackInteractivityDeps): Route[] {
  const readForm = express.raw({ type: "application/x-www-form-urlencoded", limit: BODY_LIMIT_BYTES, inflate: false });
  const log = deps.logger.child({ component: "slack-interactivity" });
  return [
    publicRoute({
      method: "post",
      path: SLACK_INTERACTIVITY_PATH,
      auth: "none",
      operation: null,
      handle: async ({ req, res }) => {
        if (!req.is("application/x-www-form-urlencoded")) throw new AppError("unsupported_media_type", "Slack sends interactions form-encoded");
        await new Promise<void>((resolve, reject) =>
          readForm(req, res, (error?: unknown) => (error === undefined ? resolve() : reject(new AppError("payload_too_large", "Request body too large")))),
        );
        const body: Buffer = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
        const now = deps.now();
        const timestamp = req.header("x-slack-request-timestamp");
        const signature = req.header("x-slack-signature");

        const interaction = parseInteraction(body);
        const reference =
          interaction.type === "block_actions"
            ? interaction.actions[0]?.value
            : ModalTarget.safeParse(safeJson(interaction.view.private_metadata)).data?.reference;
        const secret = deps.linkSigningSecret;
        const target = secret === undefined ? undefined : checkFeedbackReference(secret, reference, now);
        if (target?.status === "expired") throw new AppError("forbidden", "These buttons have expired");
        if (target?.status !== "valid") throw new AppError("unauthenticated", "Not an interaction with a result this service posted");
        const orgApp = deps.slackApps.get(target.orgId);
        if (orgApp === undefined) throw new AppError("not_found", "The organization takes no Slack interactions");

        // The reference says which organization; only its app's signing secret says Slack sent this.
        const checked = checkSlackSignature(orgApp.signingSecret, { timestamp, signature, body }, now);
        if (checked !== "valid") {
          log.info({ check: checked }, "refused a Slack interaction");
          throw new AppError("unauthenticated", checked === "stale" ? "Request timestamp outside the accepted window" : "Invalid Slack request signature");
        }
        if (!(await deps.ledger.firstUse(signature ?? "", (SLACK_TIMESTAMP_WINDOW_SECONDS + 60) * 1_000))) {
          log.info({ check: "replay" }, "refused a Slack interaction");
          throw new AppError("unauthenticated", "Slack request already received");
        }

        const { orgId, executionId } = target;
        const by: FeedbackAuthor = {
          via: "slack",
          subject: interaction.user.id,
          ...((interaction.user.username ?? interaction.user.name) === undefined ? {} : { name: interaction.user.username ?? interaction.user.name }),
        };
        const deadline = Date.now() + SLACK_CALLS_MS;

        if (interaction.type === "view_submission") {
          const modal = ModalTarget.parse(safeJson(interaction.view.private_metadata));
          const { feedbackFromModal, modalBlockOf, showFeedback } = await slackFeedback();
          const input = FeedbackInput.safeParse(feedbackFromModal(interaction.view.state.values));
          if (!input.success) {
            // Slack shows each message under its input, and keeps the modal open.
            const errors = Object.fromEntries(input.error.issues.map((issue) => [modalBlockOf(issue.path), issue.message]));
            return { response_action: "errors", errors };
          }
          const given = await deps.feedback.give(orgId, executionId, input.data, by);
          if (given === undefined) return { response_action: "errors", errors: { pes_verdict: "This execution is no longer kept" } };
          await showOrLog(() =>
            showFeedback(
              orgApp.client,
              { channel: modal.channel, ts: modal.ts, ...(modal.threadTs === undefined ? {} : { threadTs: modal.threadTs }) },
              given.current,
              deadline,
            ),
          );
          return new HttpReply(200, {});
        }

        const action = interaction.actions[0]?.action_id;
        const { FEEDBACK_ACTIONS, openFeedbackModal, showFeedback } = await slackFeedback();
        const channel = interaction.container?.channel_id ?? interaction.channel?.id;
        const ts = interaction.container?.message_ts ?? interaction.message?.ts;
        const threadTs = interaction.container?.thread_ts ?? interaction.message?.thread_ts;
        if (action === FEEDBACK_ACTIONS.details || action === FEEDBACK_ACTIONS.wrong) {
          // What fixed it, and for a wrong cause which it was, are asked in a modal (its trigger lives 3 s).
          const current = action === FEEDBACK_ACTIONS.wrong ? "wrong" : ((await deps.feedback.read(orgId, executionId))?.current.verdict ?? "right");
          if (interaction.trigger_id !== undefined && channel !== undefined && ts !== undefined && reference !== undefined) {
            await showOrLog(() =>
              openFeedbackModal(
                orgApp.client,
                interaction.trigger_id ?? "",
                { reference, channel, ts, ...(threadTs === undefined ? {} : { threadTs }) },
                current,
                deadline,
              ),
            );
          }
          if (action === FEEDBACK_ACTIONS.details) return new HttpReply(200, {});
        }
        if (action !== FEEDBACK_ACTIONS.right && action !== FEEDBACK_ACTIONS.wrong) return new HttpReply(200, {});
        const given = await deps.feedback.give(orgId, executionId, { verdict: action === FEEDBACK_ACTIONS.right ? "right" : "wrong" }, by);
        if (given === undefined) throw new AppError("not_found", "No such execution");
        if (channel !== undefined && ts !== undefined) {
          const blocks = interaction.message?.blocks;
          await showOrLog(() =>
            showFeedback(
              orgApp.client,
              { channel, ts, ...(threadTs === undefined ? {} : { threadTs }), ...(blocks === undefined ? {} : { blocks }) },
              given.current,
              deadline,
            ),
          );
        }
        return new HttpReply(200, {});
      },
    }),
  ];

  /** The answer is recorded: a message that cannot show it is logged (Slack's error code, never a token). */
  async function showOrLog(show: () => Promise<void>): Promise<void> {
    try {
      await show();
    } catch (error) {
      log.warn({ reason: error instanceof Error ? error.message : "unknown" }, "could not show the feedback in Slack");
    }
  }
}

function parseInteraction(body: Buffer): z.infer<typeof Interaction> {
  const payload = new URLSearchParams(body.toString("utf8")).get("payload");
  const parsed = Interaction.safeParse(payload === null ? undefined : safeJson(payload));
  if (!parsed.success) throw new AppError("validation", "payload must be a Slack block_actions or view_submission interaction");
  return parsed.data;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

let slackModule: Promise<typeof import("@pes/integrations/slack-feedback")> | undefined;

/** Slack's client, loaded on the first interaction: an API whose organizations take none never loads it. */
function slackFeedback(): Promise<typeof import("@pes/integrations/slack-feedback")> {
  slackModule ??= import("@pes/integrations/slack-feedback");
  return slackModule;
}
