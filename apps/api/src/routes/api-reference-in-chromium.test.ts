/**
 * `/docs` as a person sees it: a real headless Chromium (Debian's `chromium`, driven by playwright-core)
 * loads the page from the API on 127.0.0.1 and must show every operation of the document and the bearer
 * scheme, with no request leaving the machine and nothing refused by the page's Content-Security-Policy.
 */
import { once } from "node:events";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { launchChromium } from "@pes/local-services";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testApp } from "../testing/fixtures.js";

/** Where the screenshot goes (outside the repository), to look at after a run. */
const SCREENSHOT = join(process.env.SCREENSHOT_DIR ?? tmpdir(), "pes-api-reference.png");

let server: Server;
let baseUrl: string;
let browser: Browser;

beforeAll(async () => {
  // No token is involved: the verifier never fetches this JWKS address.
  server = testApp({ jwksUrl: "http://127.0.0.1:9/jwks.json" }).app.listen(0, "127.0.0.1");
  await once(server, "listening");
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  browser = await launchChromium();
}, 30_000);

afterAll(async () => {
  await browser?.close();
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
});

const isLoopback = (url: URL) => ["127.0.0.1", "localhost", "[::1]"].includes(url.hostname);

describe("GET /docs in Chromium", () => {
  it("renders every operation and the bearer scheme, offline and within its CSP", async () => {
    const document = (await (await fetch(`${baseUrl}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { operationId: string; summary: string }>>;
    };
    const operations = Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, operation]) => ({ path, method, ...operation })),
    );
    expect(operations.map((operation) => `${operation.method} ${operation.path}`)).toEqual(
      expect.arrayContaining(["get /playbook", "post /playbook/execution", "post /playbook/execution/batch"]),
    );

    const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
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
    // Well inside the test's own timeout, so that a missing element is named in the failure.
    page.setDefaultTimeout(10_000);
    const problems: string[] = [];
    page.on("console", (message) => {
      if (message.type() === "error") problems.push(message.text());
    });
    page.on("pageerror", (error) => problems.push(error.message));

    const response = await page.goto(`${baseUrl}/docs`);
    expect(response?.status()).toBe(200);
    for (const operation of operations) {
      const section = page.locator(`[data-section-id="operation/${operation.operationId}"]`);
      await section.waitFor();
      const text = (await section.textContent()) ?? "";
      expect(text, operation.operationId).toContain(operation.summary);
      expect(text, operation.operationId).toContain(operation.path);
      expect(text.toLowerCase(), operation.operationId).toContain(operation.method);
    }
    const scheme = page.locator('[data-section-id="section/Authentication/bearerAuth"]');
    await scheme.waitFor();
    expect(await scheme.textContent()).toMatch(/HTTP Authorization Scheme:\s*bearer/);
    expect(await scheme.textContent()).toMatch(/Bearer format:\s*JWT/);
    await page.screenshot({ path: SCREENSHOT, fullPage: false });

    expect(problems).toEqual([]);
    expect(refused).toEqual([]);
    const elsewhere = requested.map((url) => new URL(url)).filter((url) => url.protocol.startsWith("http") && !isLoopback(url));
    expect(elsewhere).toEqual([]);
    expect(requested).toEqual(expect.arrayContaining([`${baseUrl}/docs`, `${baseUrl}/openapi.json`, `${baseUrl}/docs/redoc.standalone.js`]));
    await context.close();
  }, 30_000);
});
