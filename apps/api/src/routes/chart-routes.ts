import type { Catalog } from "@pes/config";
import { ErrorResponse, PlaybookExecutionResult, RequestRefusal, type ChartData } from "@pes/contracts";
import type { ExecutionOutcome } from "@pes/executions";
import { checkSignedPath, pagePath, signedChartPath, signPath, type ChartFormat } from "@pes/signed-links";
import type { Request, Response } from "express";
import { LRUCache } from "lru-cache";
import { z } from "zod";
import { AppError } from "../errors.js";
import { wholeOrganization, type Executions, type Reader } from "../executions.js";
import { EXECUTION_ID, EXECUTION_PATH } from "./execution-routes.js";
import { PAGE_CONTENT_SECURITY_POLICY, renderExecutionPage } from "./execution-page.js";
import { ANSWERED, organizationRoute, publicRoute, type Route } from "./route.js";

export interface ChartRouteDeps {
  executions: Executions;
  catalog: Catalog;
  /** LINK_SIGNING_SECRET: without it, no page and no signed image is served (404). */
  linkSigningSecret: string | undefined;
  now: () => Date;
}

/** Images drawn lately, by organization, execution, action and format: drawing costs milliseconds of CPU, an execution's charts never change. */
const RENDERED_CACHE_BYTES = 16 * 1024 * 1024;
const ACTION_INDEX = /^\d{1,4}$/;
const SIGNED_IMAGE = /^(\d{1,4})\.(svg|png)$/;
/** An image served by itself: it may carry inline styles (ECharts' SVG), nothing else. */
const IMAGE_CONTENT_SECURITY_POLICY = "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'";

/**
 * `GET /playbook/execution/{id}/charts/{action}` (bearer token, the execution's organization only): an
 * action's chart as SVG, or PNG with `Accept: image/png`. And, for browsers and chat cards that cannot
 * send the token, when LINK_SIGNING_SECRET is set: `GET /view/execution/{id}` (the execution's page) and
 * `GET /view/execution/{id}/charts/{action}.svg|png`, each refused (403) unless its link is signed and
 * unexpired (signed-links).
 */
export function chartRoutes(deps: ChartRouteDeps): Route[] {
  const rendered = new LRUCache<string, Buffer>({ maxSize: RENDERED_CACHE_BYTES, sizeCalculation: (image) => Math.max(1, image.length) });
  const draw = async (key: string, chart: ChartData, format: ChartFormat): Promise<Buffer> => {
    const cached = rendered.get(key);
    if (cached !== undefined) return cached;
    const { chartPng, chartSvg } = await chartRenderer();
    const image = format === "png" ? chartPng(chart) : Buffer.from(chartSvg(chart));
    rendered.set(key, image);
    return image;
  };
  const chartOf = async (reader: Reader, executionId: string, action: number): Promise<ChartData | undefined> =>
    (await deps.executions.readCharts(reader, executionId)).get(action);

  return [
    organizationRoute({
      method: "get",
      path: `${EXECUTION_PATH}/:id/charts/:action`,
      auth: "organization",
      operation: {
        operationId: "getExecutionChart",
        summary: "Draw an action's chart: its series around the issue time, the usual range, the onset and the limit",
        description:
          "The link is the action result's `chartUrl`. SVG by default, PNG with `Accept: image/png`; drawn from the points the action " +
          "already fetched, kept as long as the execution.",
        parameters: [
          { name: "id", in: "path", description: "The execution id.", schema: z.string() },
          { name: "action", in: "path", description: "The action's index in `actionResults`.", schema: z.string() },
        ],
        responses: {
          200: { description: "The chart.", images: ["image/svg+xml", "image/png"] },
          404: {
            description: "No chart of that action of an execution the caller may see (none drawn, gone, or another organization's or team's).",
            body: ErrorResponse,
          },
        },
      },
      handle: async ({ req, res, caller }) => {
        const { id, action } = req.params;
        if (typeof id !== "string" || !EXECUTION_ID.test(id) || typeof action !== "string" || !ACTION_INDEX.test(action))
          throw new AppError("not_found", "No such chart");
        const chart = await chartOf(caller, id, Number(action));
        if (chart === undefined) throw new AppError("not_found", "No such chart");
        const format: ChartFormat = req.accepts(["image/svg+xml", "image/png"]) === "image/png" ? "png" : "svg";
        sendImage(res, await draw(`${caller.orgId}\n${id}\n${action}\n${format}`, chart, format), format, "private, no-store");
        return ANSWERED;
      },
    }),
    publicRoute({
      method: "get",
      path: `${pagePath(":id")}`,
      auth: "none",
      operation: null,
      handle: async ({ req, res }) => {
        const link = checkLink(deps, req, res, (executionId) => pagePath(executionId), "page");
        if (link === ANSWERED) return ANSWERED;
        const { id, orgId, expiresAt } = link;
        // A signed link is a capability: whoever holds it sees the page, whatever their team.
        const view = await deps.executions.read(wholeOrganization(orgId), id);
        if (view === undefined)
          return sendPage(res, 404, notice("This execution is no longer kept", "Executions are kept for a while after they finish; this one is gone."));
        const charts = view.outcome === undefined ? new Map<number, ChartData>() : await deps.executions.readCharts(wholeOrganization(orgId), id);
        const { chartCaption } = await chartRenderer();
        const images = new Map(
          [...charts].map(([action, chart]) => [
            action,
            { src: signPath(secretOf(deps), { path: signedChartPath(id, action, "svg"), orgId, executionId: id }, expiresAt), caption: chartCaption(chart) },
          ]),
        );
        const result = resultOf(view.outcome);
        return sendPage(
          res,
          200,
          renderExecutionPage({
            id,
            status: view.status,
            createdAt: view.createdAt,
            ...(view.completedAt === undefined ? {} : { completedAt: view.completedAt }),
            ...(result === undefined ? {} : { result }),
            charts: images,
            expiresAt,
          }),
        );
      },
    }),
    publicRoute({
      method: "get",
      path: `${pagePath(":id")}/charts/:file`,
      auth: "none",
      operation: null,
      handle: async ({ req, res }) => {
        const file = SIGNED_IMAGE.exec(String(req.params.file));
        const action = Number(file?.[1]);
        const format = file?.[2] === "png" ? "png" : "svg";
        const link = checkLink(
          deps,
          req,
          res,
          (executionId) => (file === null ? `${pagePath(executionId)}/charts/?` : signedChartPath(executionId, action, format)),
          "image",
        );
        if (link === ANSWERED) return ANSWERED;
        const { id, orgId } = link;
        const chart = await chartOf(wholeOrganization(orgId), id, action);
        if (chart === undefined) {
          res.status(404).type("text/plain").set({ "Cache-Control": "no-store", "X-Content-Type-Options": "nosniff" }).send("No such chart");
          return ANSWERED;
        }
        // A signed image may be cached by the one browser that holds the link, not by shared caches.
        sendImage(res, await draw(`${orgId}\n${id}\n${action}\n${format}`, chart, format), format, "private, max-age=300");
        return ANSWERED;
      },
    }),
  ];
}

let renderer: Promise<typeof import("@pes/charts")> | undefined;

/** The chart renderer (ECharts and resvg), loaded on the first chart asked for: an API nobody asks for charts never loads it. */
function chartRenderer(): Promise<typeof import("@pes/charts")> {
  renderer ??= import("@pes/charts").catch((error: unknown) => {
    renderer = undefined;
    throw error;
  });
  return renderer;
}

/**
 * The execution a signed link names, once its signature and expiry hold; otherwise the answer is sent
 * here: 404 when the service signs no links (or the organization is unknown), 403 for a link that is
 * unsigned, altered or expired. The path checked is rebuilt from the request's parameters, so a link
 * moved to another path is altered.
 */
function checkLink(
  deps: ChartRouteDeps,
  req: Request,
  res: Response,
  pathOf: (executionId: string) => string,
  kind: "page" | "image",
): { id: string; orgId: string; expiresAt: Date } | typeof ANSWERED {
  const secret = deps.linkSigningSecret;
  if (secret === undefined) throw new AppError("not_found", `No route for ${req.method} ${req.path}`);
  const id = String(req.params.id);
  const check = checkSignedPath(secret, pathOf(id), id, queryOf(req), deps.now());
  if (check !== "valid") {
    const reason = check === "expired" ? "This link has expired" : "This link is not valid";
    if (kind === "image") {
      res.status(403).type("text/plain").set({ "Cache-Control": "no-store", "X-Content-Type-Options": "nosniff" }).send(reason);
      return ANSWERED;
    }
    return sendPage(res, 403, notice(reason, "Links to an execution's page are signed and expire: ask for a fresh one."));
  }
  const orgId = String(req.query.org);
  if (!EXECUTION_ID.test(id) || !deps.catalog.organizations.has(orgId)) throw new AppError("not_found", "No such execution");
  return { id, orgId, expiresAt: new Date(Number(req.query.exp) * 1_000) };
}

/** The signature's parameters as they arrived (a repeated one is an array: not a signature). */
function queryOf(req: Request): { org?: unknown; exp?: unknown; sig?: unknown } {
  const { org, exp, sig } = req.query;
  return { org, exp, sig };
}

function secretOf(deps: ChartRouteDeps): string {
  if (deps.linkSigningSecret === undefined) throw new Error("signed links are not configured");
  return deps.linkSigningSecret;
}

function resultOf(outcome: ExecutionOutcome | undefined): PlaybookExecutionResult | undefined {
  if (outcome === undefined) return undefined;
  if (outcome instanceof RequestRefusal) return { error: outcome.issues.map((issue) => issue.message).join("; ") };
  const parsed = PlaybookExecutionResult.safeParse(JSON.parse(outcome.text));
  return parsed.success ? parsed.data : { error: "The result cannot be read by this version of the service" };
}

function sendPage(res: Response, status: number, html: string): typeof ANSWERED {
  res
    .status(status)
    .set({
      "Content-Security-Policy": PAGE_CONTENT_SECURITY_POLICY,
      "X-Content-Type-Options": "nosniff",
      "Referrer-Policy": "no-referrer",
      "Cache-Control": "private, no-store",
      "X-Robots-Tag": "noindex, nofollow",
    })
    .type("html")
    .send(html);
  return ANSWERED;
}

function sendImage(res: Response, image: Buffer, format: ChartFormat, cacheControl: string): void {
  res
    .status(200)
    .set({ "Content-Security-Policy": IMAGE_CONTENT_SECURITY_POLICY, "X-Content-Type-Options": "nosniff", "Cache-Control": cacheControl, Vary: "Accept" })
    .type(format === "png" ? "image/png" : "image/svg+xml; charset=utf-8")
    .send(image);
}

/** A page that only says something (an expired link, a gone execution): our own words, no value of the request. */
function notice(title: string, detail: string): string {
  return `<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<meta name="referrer" content="no-referrer">\n<title>${title}</title>\n</head>\n<body>\n<h1>${title}</h1>\n<p>${detail}</p>\n</body>\n</html>\n`;
}
