/**
 * An execution's page as a person sees it, from a signed link and without a token: a real headless
 * Chromium (Debian's `chromium`, driven by playwright-core) loads it from the API on 127.0.0.1 and must
 * show the bottom line, the findings, the charts (images drawn by this service), the mitigations, the
 * actions and what could not be checked, with nothing asked of anywhere else and nothing refused by the
 * page's Content-Security-Policy; an altered or expired link gets a 403. The screenshot is kept in
 * test-artifacts/ (gitignored).
 */
import { once } from "node:events";
import { mkdir } from "node:fs/promises";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { launchChromium, startRedis, type RedisHandle } from "@pes/local-services";
import { Redis } from "ioredis";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chartedExecution, LINK_SECRET, signedPage } from "../testing/charted-execution.js";
import { FakeExecutionClient, testApp } from "../testing/fixtures.js";

const ARTIFACTS = fileURLToPath(new URL("../../test-artifacts/", import.meta.url));

let server: Server;
let baseUrl: string;
let browser: Browser;
let redisHandle: RedisHandle;
let redis: Redis;

beforeAll(async () => {
  redisHandle = await startRedis();
  redis = new Redis(redisHandle.url);
  const client = new FakeExecutionClient();
  const charts = await chartedExecution(client, redis);
  // No token is involved: the verifier never fetches this JWKS address.
  server = testApp({
    jwksUrl: "http://127.0.0.1:9/jwks.json",
    executionClient: client,
    charts,
    linkSigningSecret: LINK_SECRET,
    now: () => new Date(),
  }).app.listen(0, "127.0.0.1");
  await once(server, "listening");
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  browser = await launchChromium();
}, 30_000);

afterAll(async () => {
  await browser?.close();
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  redis?.disconnect();
  await redisHandle?.stop();
});

const isLoopback = (url: URL) => ["127.0.0.1", "localhost", "[::1]"].includes(url.hostname);

describe("the execution page in Chromium", () => {
  it("renders from a signed link, offline and within its CSP, and refuses an altered or expired one", async () => {
    const context = await browser.newContext({ viewport: { width: 1000, height: 900 } });
    const requested: string[] = [];
    const refused: string[] = [];
    context.on("request", (request) => requested.push(request.url()));
    // Anything bound elsewhere is refused here as well as noted: the test never leaves the machine.
    await context.route("**/*", (route) => {
      const url = new URL(route.request().url());
      if (url.protocol.startsWith("http") && !isLoopback(url)) {
        refused.push(url.href);
        return route.abort();
      }
      return route.continue();
    });
    const page = await context.newPage();
    page.setDefaultTimeout(10_000);
    const problems: string[] = [];
    page.on("console", (message) => {
      if (message.type() === "error") problems.push(message.text());
    });
    page.on("pageerror", (error) => problems.push(error.message));

    const link = `${baseUrl}${signedPage(new Date(Date.now() + 3_600_000))}`;
    const response = await page.goto(link);
    expect(response?.status()).toBe(200);
    expect(await page.locator("#bottom-line").textContent()).toContain("likely cause: Connections of orders-db at its limit");
    // Alert-derived markup shows as text: no element came of it.
    expect(await page.locator("#bottom-line").textContent()).toContain('<script>alert("x")</script>');
    expect(await page.locator('img[src^="https://"]').count()).toBe(0);
    expect(await page.locator("script").count()).toBe(0);
    expect(await page.locator(".gadget").count()).toBe(2);
    expect(await page.locator(".mitigation").count()).toBe(3);
    expect(await page.locator("#actions tbody tr").count()).toBe(3);
    expect(await page.locator("#unchecked").textContent()).toContain("Last deploy of checkout: deploy API answered HTTP 502");
    // Both charts drawn by this service, loaded and decoded.
    const images = page.locator("figure.chart img");
    expect(await images.count()).toBe(2);
    // Browser-side code as text: this package is typed for Node, without the DOM's types.
    await page.waitForFunction('[...document.querySelectorAll("figure.chart img")].every((image) => image.complete)');
    const sizes: unknown = await page.evaluate('[...document.querySelectorAll("figure.chart img")].map((image) => image.naturalWidth)');
    expect(sizes).toEqual([800, 800]);
    await mkdir(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: `${ARTIFACTS}execution-page.png`, fullPage: true });
    // Its top, as a reader first sees it (docs/images keeps a copy).
    await page.setViewportSize({ width: 1000, height: 1150 });
    await page.screenshot({ path: `${ARTIFACTS}execution-page-top.png` });

    // The same page with its link altered (another organization) or expired: 403, and nothing of the execution.
    const altered = new URL(link);
    altered.searchParams.set("org", "globex");
    const refusedPage = await page.goto(altered.href);
    expect(refusedPage?.status()).toBe(403);
    expect(await page.locator("body").textContent()).not.toContain("orders-db");
    const expired = await page.goto(`${baseUrl}${signedPage(new Date(Date.now() - 1_000))}`);
    expect(expired?.status()).toBe(403);
    expect(await page.locator("h1").textContent()).toBe("This link has expired");

    expect(problems.filter((problem) => !problem.includes("403"))).toEqual([]);
    expect(refused).toEqual([]);
    const elsewhere = requested.map((url) => new URL(url)).filter((url) => url.protocol.startsWith("http") && !isLoopback(url));
    expect(elsewhere).toEqual([]);
    await context.close();
  }, 30_000);
});
