// Charts with the bearer token, and the signed page and images without it: through the app, charts'
// data in a real Redis (the real chart store), the execution in the fake execution client.
import { startRedis, type RedisHandle } from "@pes/local-services";
import { Redis } from "ioredis";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chartedExecution, EXECUTION_ID, LINK_SECRET, signedImage, signedPage } from "../testing/charted-execution.js";
import { FakeExecutionClient, rsaKey, signToken, startJwksServer, testApp, type JwksServer } from "../testing/fixtures.js";

const key = rsaKey("key-1");
const acme = signToken({ key });
const globex = signToken({ key, claims: { org_id: "globex", client_id: "globex-ci" } });
const NOW = new Date("2026-11-21T14:10:00Z");
const inADay = new Date(NOW.getTime() + 86_400_000);

let jwks: JwksServer;
let redisHandle: RedisHandle;
let redis: Redis;
let app: ReturnType<typeof testApp>["app"];
let unsigned: ReturnType<typeof testApp>["app"];

beforeAll(async () => {
  [jwks, redisHandle] = await Promise.all([startJwksServer([key.jwk]), startRedis()]);
  redis = new Redis(redisHandle.url);
  const client = new FakeExecutionClient();
  const charts = await chartedExecution(client, redis);
  app = testApp({ jwksUrl: jwks.url, executionClient: client, charts, linkSigningSecret: LINK_SECRET, now: () => NOW }).app;
  unsigned = testApp({ jwksUrl: jwks.url, executionClient: client, charts, now: () => NOW }).app;
});

afterAll(async () => {
  redis.disconnect();
  await Promise.all([jwks.close(), redisHandle.stop()]);
});

describe("GET /playbook/execution/{id}/charts/{action}", () => {
  it("draws the chart as SVG, or as PNG when asked, for the execution's organization", async () => {
    const svg = await request(app).get(`/playbook/execution/${EXECUTION_ID}/charts/0`).set("Authorization", `Bearer ${acme}`);
    expect(svg.status).toBe(200);
    expect(svg.headers["content-type"]).toBe("image/svg+xml; charset=utf-8");
    expect(svg.headers["x-content-type-options"]).toBe("nosniff");
    const text = String(svg.body instanceof Buffer ? svg.body.toString("utf8") : svg.text);
    expect(text.startsWith("<svg")).toBe(true);
    expect(text).toContain("Connections of orders-db");
    expect(text).not.toContain("<script");

    const png = await request(app)
      .get(`/playbook/execution/${EXECUTION_ID}/charts/1`)
      .set("Authorization", `Bearer ${acme}`)
      .set("Accept", "image/png")
      .buffer(true);
    expect(png.status).toBe(200);
    expect(png.headers["content-type"]).toBe("image/png");
    expect((png.body as Buffer).subarray(1, 4).toString("latin1")).toBe("PNG");
  });

  it("is a 404 for another organization, an action without a chart and a malformed id; a 401 without a token", async () => {
    const get = (path: string, token?: string) => {
      const call = request(app).get(path);
      return token === undefined ? call : call.set("Authorization", `Bearer ${token}`);
    };
    expect((await get(`/playbook/execution/${EXECUTION_ID}/charts/0`, globex)).status).toBe(404);
    expect((await get(`/playbook/execution/${EXECUTION_ID}/charts/2`, acme)).status).toBe(404);
    expect((await get(`/playbook/execution/${EXECUTION_ID}/charts/x`, acme)).status).toBe(404);
    expect((await get("/playbook/execution/not-an-id/charts/0", acme)).status).toBe(404);
    expect((await get(`/playbook/execution/${EXECUTION_ID}/charts/0`)).status).toBe(401);
  });
});

describe("GET /view/execution/{id} (signed)", () => {
  it("renders the page: bottom line, findings, charts as signed images, mitigations, actions, what could not be checked, all escaped", async () => {
    const page = await request(app).get(signedPage(inADay));
    expect(page.status).toBe(200);
    expect(page.headers["content-type"]).toBe("text/html; charset=utf-8");
    const policy = page.headers["content-security-policy"] ?? "";
    expect(policy).toMatch(
      /^default-src 'none'; img-src 'self'; style-src 'sha256-[A-Za-z0-9+/=]+'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'$/,
    );
    expect(page.headers["referrer-policy"]).toBe("no-referrer");
    expect(page.headers["cache-control"]).toBe("private, no-store");
    const html = page.text;
    expect(html).not.toContain("<script");
    expect(html).not.toContain("<img src=https://evil.example");
    expect(html).toContain("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;");
    for (const part of ["Bottom line", "Findings by gadget", "Charts", "Mitigations", "Actions", "What could not be checked", "deploy API answered HTTP 502"]) {
      expect(html).toContain(part);
    }
    // Links only to http(s); the javascript: mitigation is shown as text, never as a link.
    expect(html).toContain('href="https://grafana.example/d/db?var-db=orders-db"');
    expect(html).not.toContain('href="javascript:');
    // Each chart's image is a signed path on this service, valid as long as the page's link.
    const images = [...html.matchAll(/<img src="([^"]+)"/g)].map((match) => (match[1] ?? "").replaceAll("&amp;", "&"));
    expect(images).toHaveLength(2);
    for (const image of images) {
      expect(image.startsWith(`/view/execution/${EXECUTION_ID}/charts/`)).toBe(true);
      const answer = await request(app).get(image);
      expect(answer.status).toBe(200);
      expect(answer.headers["content-type"]).toBe("image/svg+xml; charset=utf-8");
    }
  });

  it("refuses an altered, an expired and an unsigned link with a 403, and reads nothing", async () => {
    const link = new URL(signedPage(inADay), "http://api.test");
    const altered = (name: string, value: string) => {
      const copy = new URL(link);
      copy.searchParams.set(name, value);
      return `${copy.pathname}${copy.search}`;
    };
    const sig = link.searchParams.get("sig") ?? "";
    for (const path of [
      altered("org", "globex"),
      altered("exp", String(Number(link.searchParams.get("exp")) + 60)),
      altered("sig", `${sig.startsWith("A") ? "B" : "A"}${sig.slice(1)}`),
      `/view/execution/1b9c7f4e-1d7a-4b8e-9f51-5e6f7a8b9c0d${link.search}`,
      `/view/execution/${EXECUTION_ID}`,
      signedPage(new Date(NOW.getTime() - 1_000)),
    ]) {
      const answer = await request(app).get(path);
      expect(answer.status, path).toBe(403);
      expect(answer.text).not.toContain("Bottom line");
      expect(answer.text).not.toContain("orders-db");
    }
    expect((await request(app).get(signedPage(new Date(NOW.getTime() - 1_000)))).text).toContain("This link has expired");
  });

  it("serves a signed image only at the path it was signed for", async () => {
    const png = await request(app)
      .get(signedImage(0, "png", inADay))
      .buffer(true);
    expect(png.status).toBe(200);
    expect(png.headers["content-type"]).toBe("image/png");
    const moved = signedImage(0, "png", inADay).replace("/charts/0.png", "/charts/1.png");
    expect((await request(app).get(moved)).status).toBe(403);
    expect((await request(app).get(signedImage(0, "svg", new Date(NOW.getTime() - 1_000)))).status).toBe(403);
    expect((await request(app).get(signedImage(7, "svg", inADay))).status).toBe(404);
  });

  it("serves no page and no signed image when the service signs no links", async () => {
    expect((await request(unsigned).get(signedPage(inADay))).status).toBe(404);
    expect((await request(unsigned).get(signedImage(0, "svg", inADay))).status).toBe(404);
  });

  it("is a 404 page for an execution no longer kept, even with a valid link", async () => {
    const gone = await request(testApp({ jwksUrl: jwks.url, linkSigningSecret: LINK_SECRET, now: () => NOW }).app).get(signedPage(inADay));
    expect(gone.status).toBe(404);
    expect(gone.text).toContain("no longer kept");
  });
});
