import { describe, expect, it } from "vitest";
import { slackToPlainText, unescapeSlackEntities } from "./slack-text.js";
import { slackTsToDate } from "./slack-message.js";

describe("unescapeSlackEntities", () => {
  it("undoes &amp;, &lt; and &gt; in one pass", () => {
    expect(unescapeSlackEntities("a &lt; b &amp;&amp; c &gt; d")).toBe("a < b && c > d");
    // An escaped entity reads as the entity, not as the character it would name.
    expect(unescapeSlackEntities("&amp;lt;!channel&amp;gt;")).toBe("&lt;!channel&gt;");
    expect(unescapeSlackEntities("&quot; &nbsp;")).toBe("&quot; &nbsp;");
  });
});

describe("slackToPlainText", () => {
  it("shows a labelled link as its label and keeps its URL, unescaped", () => {
    expect(slackToPlainText("see <https://grafana.example/d/x?from=1&amp;to=2|the dashboard> now")).toEqual({
      text: "see the dashboard now",
      links: [{ url: "https://grafana.example/d/x?from=1&to=2", label: "the dashboard" }],
    });
  });

  it("shows a bare link as its URL", () => {
    expect(slackToPlainText("Source: <http://prometheus:9090/graph?g0.expr=up&amp;g0.tab=1>")).toEqual({
      text: "Source: http://prometheus:9090/graph?g0.expr=up&g0.tab=1",
      links: [{ url: "http://prometheus:9090/graph?g0.expr=up&g0.tab=1" }],
    });
  });

  it("reads mentions, channels, special mentions and dates as text", () => {
    expect(
      slackToPlainText("<@U0123|ann> <@U0456> in <#C0789|ops> <#C0AB> <!here> <!channel> <!subteam^S012|@sre> <!date^1392734382^{date} at {time}|Feb 18, 2014>")
        .text,
    ).toBe("@ann @U0456 in #ops #C0AB @here @channel @sre Feb 18, 2014");
  });

  it("reads escaped angle brackets as text, never as a link or mention", () => {
    const plain = slackToPlainText("value &lt;!channel&gt; and &lt;https://evil.example|click&gt;");
    expect(plain.text).toBe("value <!channel> and <https://evil.example|click>");
    // The URL is still text that names a URL, but no label was taken from the escaped form.
    expect(plain.links).toEqual([{ url: "https://evil.example" }]);
  });

  it("leaves a raw < that opens no sequence as it is", () => {
    expect(slackToPlainText("latency < 5s and > 1s").text).toBe("latency < 5s and > 1s");
  });

  it("collects bare URLs that Slack did not link", () => {
    expect(slackToPlainText("incident https://acme.pagerduty.com/incidents/Q1ABC opened").links).toEqual([
      { url: "https://acme.pagerduty.com/incidents/Q1ABC" },
    ]);
  });

  it("keeps mailto links as text without collecting them", () => {
    expect(slackToPlainText("<mailto:ops@example.com|ops@example.com>")).toEqual({ text: "ops@example.com", links: [] });
  });
});

describe("slackTsToDate", () => {
  it("reads seconds and microseconds to the millisecond", () => {
    expect(slackTsToDate("1714651200.123456")).toEqual(new Date(Date.UTC(2024, 4, 2, 12, 0, 0, 123)));
    expect(slackTsToDate("not-a-ts")).toBeUndefined();
  });
});
