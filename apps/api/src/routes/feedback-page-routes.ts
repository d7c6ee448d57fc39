import { FeedbackInput } from "@pes/contracts";
import { checkSignedPath, feedbackPath } from "@pes/signed-links";
import escapeHtml from "escape-html";
import express, { type Request, type Response } from "express";
import { AppError } from "../errors.js";
import type { Feedback } from "../feedback/feedback.js";
import { EXECUTION_ID } from "./execution-routes.js";
import { ANSWERED, publicRoute, type Route } from "./route.js";

export interface FeedbackPageDeps {
  feedback: Feedback;
  /** LINK_SIGNING_SECRET: without it, no feedback page is served (404). */
  linkSigningSecret: string | undefined;
  now: () => Date;
}

/** The page holds a form posting to itself, and nothing else: no script, no style, no image. */
const FEEDBACK_PAGE_POLICY = "default-src 'none'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";
const FORM_LIMIT_BYTES = 16 * 1024;

/**
 * `GET` and `POST /view/execution/{id}/feedback?org=…&exp=…&sig=…`: the feedback page a Microsoft Teams
 * card's "Right cause" / "Wrong cause" buttons open (a card posted through Graph as a user cannot send an
 * action back to the service). The link is signed for the organization and execution (signed-links'
 * feedbackReference); GET shows a form and changes nothing (link previews and prefetchers fetch links),
 * POST records its answer. Who answered is not known: the answer is by `link`.
 */
export function feedbackPageRoutes(deps: FeedbackPageDeps): Route[] {
  const readForm = express.urlencoded({ extended: false, limit: FORM_LIMIT_BYTES, parameterLimit: 20 });
  return [
    publicRoute({
      method: "get",
      path: feedbackPath(":id"),
      auth: "none",
      operation: null,
      handle: ({ req, res }) => {
        const link = checkLink(deps, req, res);
        if (link === ANSWERED) return ANSWERED;
        const verdict = req.query.verdict === "wrong" ? "wrong" : "right";
        return sendPage(res, 200, formPage(req.originalUrl, verdict, []));
      },
    }),
    publicRoute({
      method: "post",
      path: feedbackPath(":id"),
      auth: "none",
      operation: null,
      handle: async ({ req, res }) => {
        const link = checkLink(deps, req, res);
        if (link === ANSWERED) return ANSWERED;
        if (!req.is("application/x-www-form-urlencoded")) throw new AppError("unsupported_media_type", "The form is sent form-encoded");
        await new Promise<void>((resolve, reject) =>
          readForm(req, res, (error?: unknown) => (error === undefined ? resolve() : reject(new AppError("payload_too_large", "Form too large")))),
        );
        const form = (typeof req.body === "object" && req.body !== null ? req.body : {}) as Record<string, unknown>;
        const filled = (name: string) => (typeof form[name] === "string" && form[name].trim() !== "" ? form[name] : undefined);
        const cause = { kind: filled("causeKind"), subject: filled("causeSubject"), text: filled("causeText") };
        const given = {
          verdict: filled("verdict"),
          ...(Object.values(cause).some((value) => value !== undefined) ? { cause: withoutUndefined(cause) } : {}),
          ...(filled("resolution") === undefined ? {} : { resolution: filled("resolution") }),
        };
        const input = FeedbackInput.safeParse(given);
        if (!input.success) {
          const problems = input.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`);
          return sendPage(res, 400, formPage(req.originalUrl, given.verdict === "wrong" ? "wrong" : "right", problems));
        }
        const recorded = await deps.feedback.give(link.orgId, link.id, input.data, { via: "link" });
        if (recorded === undefined) return sendPage(res, 404, notice("This execution is no longer kept", "Its answer cannot be recorded."));
        return sendPage(res, 200, notice("Thank you", `Recorded: ${input.data.verdict === "right" ? "the right cause" : "the wrong cause"}.`));
      },
    }),
  ];
}

function checkLink(deps: FeedbackPageDeps, req: Request, res: Response): { id: string; orgId: string } | typeof ANSWERED {
  const secret = deps.linkSigningSecret;
  if (secret === undefined) throw new AppError("not_found", `No route for ${req.method} ${req.path}`);
  const id = String(req.params.id);
  const query = { org: req.query.org, exp: req.query.exp, sig: req.query.sig };
  const check = EXECUTION_ID.test(id) ? checkSignedPath(secret, feedbackPath(id), id, query, deps.now()) : "altered";
  if (check !== "valid") {
    return sendPage(res, 403, notice(check === "expired" ? "This link has expired" : "This link is not valid", "Ask for the result to be posted again."));
  }
  return { id, orgId: String(query.org) };
}

function withoutUndefined(value: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(Object.entries(value).filter((entry): entry is [string, string] => entry[1] !== undefined));
}

function formPage(action: string, verdict: "right" | "wrong", problems: readonly string[]): string {
  const checked = (value: string) => (value === verdict ? " checked" : "");
  const field = (name: string, label: string, multiline = false) =>
    `<p><label>${label}<br>${multiline ? `<textarea name="${name}" rows="3" cols="60" maxlength="2000"></textarea>` : `<input name="${name}" size="60" maxlength="500">`}</label></p>`;
  return page(
    "Was the cause right?",
    [
      ...(problems.length === 0 ? [] : [`<ul>${problems.map((problem) => `<li>${escapeHtml(problem)}</li>`).join("")}</ul>`]),
      `<form method="post" action="${escapeHtml(action)}">`,
      `<p><label><input type="radio" name="verdict" value="right"${checked("right")}> Right cause</label> <label><input type="radio" name="verdict" value="wrong"${checked("wrong")}> Wrong cause</label></p>`,
      field("causeKind", "Actual cause: kind (deploy, config, saturation, oom, upstream, node…)"),
      field("causeSubject", "Actual cause: what it is about"),
      field("causeText", "Actual cause, in words", true),
      field("resolution", "What fixed it", true),
      `<p><button type="submit">Save</button></p>`,
      "</form>",
    ].join("\n"),
  );
}

function notice(title: string, detail: string): string {
  return page(title, `<p>${escapeHtml(detail)}</p>`);
}

function page(title: string, body: string): string {
  return `<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<meta name="referrer" content="no-referrer">\n<title>${escapeHtml(title)}</title>\n</head>\n<body>\n<h1>${escapeHtml(title)}</h1>\n${body}\n</body>\n</html>\n`;
}

function sendPage(res: Response, status: number, html: string): typeof ANSWERED {
  res
    .status(status)
    .set({
      "Content-Security-Policy": FEEDBACK_PAGE_POLICY,
      "X-Content-Type-Options": "nosniff",
      "Referrer-Policy": "no-referrer",
      "Cache-Control": "private, no-store",
      "X-Robots-Tag": "noindex, nofollow",
    })
    .type("html")
    .send(html);
  return ANSWERED;
}
