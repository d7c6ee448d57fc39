/**
 * A result's card as Teams draws it: Microsoft's own Adaptive Cards renderer (the `adaptivecards`
 * package, which Teams' web client is built on) parses and renders the card in a real headless Chromium
 * (Debian's, driven by playwright-core), from a page on 127.0.0.1. The chart's signed https URL is
 * answered by the test inside the browser (nothing leaves the machine). The renderer must report nothing
 * it cannot read, show the bottom line, the findings and the mitigation, and load the chart from its URL. The screenshot is kept in test-artifacts/ (gitignored); docs/images/teams-card.png
 * is a copy of it.
 */
import { mkdir, readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import type { PlaybookExecutionResult } from "@pes/contracts";
import { launchChromium, startTestHttpServer, type TestHttpServer } from "@pes/local-services";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { markOf, renderTeamsMessage } from "./teams-card.js";

const ARTIFACTS = fileURLToPath(new URL("../../test-artifacts/", import.meta.url));
const CHART = fileURLToPath(new URL("../../../../docs/images/chart.png", import.meta.url));
// The renderer's browser build, as Microsoft publishes it.
const renderer = createRequire(import.meta.url).resolve("adaptivecards/dist/adaptivecards.min.js");

const result: PlaybookExecutionResult = {
  highlights:
    "Around 14:05 UTC for service=checkout: p99 latency rose 4.1× and errors 12×.\nLikely cause: the deploy of checkout to v42 at 14:02 UTC, three minutes before.",
  verdict: {
    conclusion: "cause",
    cause: { kind: "deploy", subject: "checkout", detail: "v42", action: "Deploys of checkout", confidence: "high" },
    symptoms: [{ kind: "latency", action: "p99 latency" }],
    background: [],
    ruledOut: [],
    normal: [],
    unchecked: [],
  },
  gadgetsHighlights: [
    { title: "Golden signals", args: { service: "checkout" }, highlights: "p99 latency rose 4.1× since 14:05 UTC; errors 12×." },
    { title: "Changes", highlights: "checkout deployed v42 at 14:02 UTC." },
  ],
  actionResults: [
    { title: "p99 latency", shortAnswer: "p99 latency rose 4.1× since 14:05 UTC (0.21 s → 0.86 s)", mostImportantLink: "https://grafana.example/d/latency" },
    { title: "Deploys of checkout", shortAnswer: "v42 deployed at 14:02 UTC", mostImportantLink: "https://argocd.example/applications/checkout" },
  ],
  actionableMitigations: [{ toolName: "argocd", customName: "Roll back checkout to v41", url: "https://argocd.example/applications/checkout?rollback=v41" }],
  pageUrl: "https://pes.example.com/view/execution/0b7c?org=acme&exp=1767225600&sig=signed",
};

let server: TestHttpServer;
let browser: Browser;

beforeAll(async () => {
  const script = await readFile(renderer);
  server = await startTestHttpServer((request, response) => {
    if (request.url === "/adaptivecards.js") return void response.writeHead(200, { "content-type": "text/javascript" }).end(script);
    response
      .writeHead(200, { "content-type": "text/html" })
      .end(
        '<!doctype html><meta charset="utf-8"><body style="margin:0;background:#f5f5f5"><div id="card" style="width:560px;margin:16px;background:#fff"></div><script src="/adaptivecards.js"></script>',
      );
  });
  browser = await launchChromium();
}, 30_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

/**
 * Runs in the page: parses the card with the renderer, draws it into #card, and says what the renderer
 * complained of, the text shown and the images' URLs.
 */
const DRAW_CARD = `(content) => {
  const card = new AdaptiveCards.AdaptiveCard();
  const context = new AdaptiveCards.SerializationContext();
  card.parse(JSON.parse(content), context);
  const element = card.render();
  document.getElementById("card").appendChild(element);
  const problems = [];
  for (let index = 0; index < context.eventCount; index += 1) problems.push(context.getEventAt(index).message);
  return { problems, text: element.innerText, images: [...element.querySelectorAll("img")].map((image) => image.src) };
}`;

const CHART_URL = "https://pes.example.com/view/execution/0b7c/charts/0.png?org=acme&exp=1767225600&sig=signed";

describe("a result's Teams card, drawn by the Adaptive Cards renderer in Chromium", () => {
  it("parses without complaint and shows the bottom line, the findings, the mitigation and the chart", async () => {
    const message = renderTeamsMessage(
      { result, title: "High p99 latency on checkout", charts: [{ title: "p99 latency", url: CHART_URL }], pageUrl: result.pageUrl },
      markOf("exec-1:teams:0"),
    );
    const page = await browser.newPage({ viewport: { width: 600, height: 900 } });
    const chart = await readFile(CHART);
    await page.route("https://pes.example.com/**", (route) => route.fulfill({ status: 200, contentType: "image/png", body: chart }));
    await page.goto(server.url);
    await page.waitForFunction('"AdaptiveCards" in window');
    const drawn = (await page.evaluate(`(${DRAW_CARD})(${JSON.stringify(message.attachments[0].content)})`)) as {
      problems: string[];
      text: string;
      images: string[];
    };
    await page.waitForFunction('[...document.querySelectorAll("#card img")].every((image) => image.complete && image.naturalWidth > 0)');

    expect(drawn.problems).toEqual([]);
    expect(drawn.text).toContain("Likely cause: the deploy of checkout to v42");
    expect(drawn.text).toContain("Golden signals");
    expect(drawn.text).toContain("Roll back checkout to v41");
    expect(drawn.images).toEqual([CHART_URL]);

    await mkdir(ARTIFACTS, { recursive: true });
    await page.locator("#card").screenshot({ path: `${ARTIFACTS}teams-card.png` });
    await page.close();
  });
});
