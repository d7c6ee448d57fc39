import { describe, expect, it } from "vitest";
import { checkSignedPath, executionLinks, pagePath, signedChartPath, signPath } from "./signed-links.js";

const SECRET = "a-secret-of-at-least-thirty-two-characters";
const ID = "0b9c7f4e-1d7a-4b8e-9f51-5e6f7a8b9c0d";
const now = new Date("2026-11-21T14:08:00Z");
const inAWeek = new Date(now.getTime() + 7 * 86_400_000);

/** The parts of a signed link as the API reads them. */
function parts(link: string): { path: string; query: Record<string, string> } {
  const url = new URL(link, "http://pes.test");
  return { path: url.pathname, query: Object.fromEntries(url.searchParams) };
}

describe("signPath and checkSignedPath", () => {
  it("accepts the link as signed until it expires, and then refuses it", () => {
    const { path, query } = parts(signPath(SECRET, { path: pagePath(ID), orgId: "acme", executionId: ID }, inAWeek));
    expect(path).toBe(`/view/execution/${ID}`);
    expect(Object.keys(query).sort()).toEqual(["exp", "org", "sig"]);
    expect(checkSignedPath(SECRET, path, ID, query, now)).toBe("valid");
    expect(checkSignedPath(SECRET, path, ID, query, new Date(inAWeek.getTime() - 1_000))).toBe("valid");
    expect(checkSignedPath(SECRET, path, ID, query, inAWeek)).toBe("expired");
  });

  it("refuses a link with any part altered: path, organization, execution, expiry, signature, secret", () => {
    const { path, query } = parts(signPath(SECRET, { path: pagePath(ID), orgId: "acme", executionId: ID }, inAWeek));
    const otherId = "1b9c7f4e-1d7a-4b8e-9f51-5e6f7a8b9c0d";
    expect(checkSignedPath(SECRET, pagePath(otherId), otherId, query, now)).toBe("altered");
    expect(checkSignedPath(SECRET, signedChartPath(ID, 0, "png"), ID, query, now)).toBe("altered");
    expect(checkSignedPath(SECRET, path, ID, { ...query, org: "globex" }, now)).toBe("altered");
    expect(checkSignedPath(SECRET, path, ID, { ...query, exp: String(Number(query.exp) + 86_400) }, now)).toBe("altered");
    const sig = query.sig ?? "";
    expect(checkSignedPath(SECRET, path, ID, { ...query, sig: `${sig.startsWith("A") ? "B" : "A"}${sig.slice(1)}` }, now)).toBe("altered");
    expect(checkSignedPath(SECRET, path, ID, { ...query, sig: "short" }, now)).toBe("altered");
    expect(checkSignedPath(`${SECRET}!`, path, ID, query, now)).toBe("altered");
    expect(checkSignedPath(SECRET, path, ID, { ...query, exp: "1e12" }, now)).toBe("altered");
  });

  it("says a link without its signature is unsigned", () => {
    expect(checkSignedPath(SECRET, pagePath(ID), ID, {}, now)).toBe("unsigned");
    expect(checkSignedPath(SECRET, pagePath(ID), ID, { org: "acme", exp: "1" }, now)).toBe("unsigned");
    expect(checkSignedPath(SECRET, pagePath(ID), ID, { org: ["acme"], exp: "1", sig: "x" }, now)).toBe("unsigned");
  });
});

describe("executionLinks", () => {
  it("signs the page and one SVG and PNG image per charted action, absolute under the public address", () => {
    const result = {
      highlights: "likely cause: …",
      actionResults: [{ title: "Logs" }, { title: "Connections", chartUrl: `/playbook/execution/${ID}/charts/1` }],
    };
    const links = executionLinks(
      { secret: SECRET, publicUrl: "https://pes.example.com/", lifetimeSeconds: 3_600 },
      { executionId: ID, orgId: "acme", result },
      now,
    );
    expect(links.expiresAt).toEqual(new Date(now.getTime() + 3_600_000));
    expect(links.pageUrl.startsWith(`https://pes.example.com/view/execution/${ID}?org=acme&exp=`)).toBe(true);
    expect(links.charts.map(({ action, title }) => ({ action, title }))).toEqual([{ action: 1, title: "Connections" }]);
    for (const [link, path] of [
      [links.pageUrl, pagePath(ID)],
      [links.charts[0]?.svgUrl, signedChartPath(ID, 1, "svg")],
      [links.charts[0]?.pngUrl, signedChartPath(ID, 1, "png")],
    ] as const) {
      const signed = parts(link ?? "");
      expect(signed.path).toBe(path);
      expect(checkSignedPath(SECRET, signed.path, ID, signed.query, now)).toBe("valid");
    }
  });
});
