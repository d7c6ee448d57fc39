import type { PlaybookExecutionResult } from "@pes/contracts";
import { describe, expect, it } from "vitest";
import { renderEnrichment, SLACK_LIMITS, type SlackPostMessage } from "./enrichment-blocks.js";
import { escapeAndClip, escapeSlackText, slackLink } from "./slack-mrkdwn.js";

const result: PlaybookExecutionResult = {
  highlights: "Around 14:05 UTC for service=checkout: p99 latency rose 4.1×. p99 latency came first, at 14:02 UTC.",
  gadgetsHighlights: [
    { title: "Golden signals", args: { service: "checkout" }, highlights: "p99 latency rose 4.1× since 14:02 UTC; error ratio within its usual range." },
    { title: "Changes", highlights: "Last deploy of checkout: v1.2.3 at 14:01 UTC." },
  ],
  actionResults: [
    { title: "p99 latency", shortAnswer: "p99 latency rose 4.1× since 14:02 UTC", mostImportantLink: "https://grafana.example/d/1?var-service=checkout" },
    { title: "error ratio", shortAnswer: "error ratio within its usual range", mostImportantLink: "https://grafana.example/d/2" },
    { title: "Last deploy of checkout", shortAnswer: "Last deploy of checkout: v1.2.3 at 14:01 UTC", mostImportantLink: "https://deploys.example/checkout" },
  ],
  actionableMitigations: [
    { toolName: "argocd", customName: "Roll back checkout", url: "https://argocd.example/applications/checkout", action: { revision: "v1.2.2" } },
  ],
};

function allText(messages: readonly SlackPostMessage[]): string {
  return messages.flatMap((message) => [message.text, ...message.blocks.map((block) => (block.type === "section" ? block.text.text : ""))]).join("\n");
}

function sectionTexts(message: SlackPostMessage): string[] {
  return message.blocks.flatMap((block) => (block.type === "section" ? [block.text.text] : []));
}

describe("slack mrkdwn", () => {
  it("escapes the three control characters and nothing else", () => {
    expect(escapeSlackText("<!channel> & <https://evil|click> *bold*")).toBe("&lt;!channel&gt; &amp; &lt;https://evil|click&gt; *bold*");
  });

  it("clips after escaping without splitting an entity or a surrogate pair", () => {
    expect(escapeAndClip("a&b", 4)).toBe("a…");
    expect(escapeAndClip("😀😀😀", 4)).toBe("😀…");
    expect(escapeAndClip("short", 10)).toBe("short");
  });

  it("links only http(s) URLs, with the label escaped and a pipe in the URL encoded", () => {
    expect(slackLink("https://x.example/a|b?q=1&r=2", "<!here>")).toBe("<https://x.example/a%7Cb?q=1&amp;r=2|&lt;!here&gt;>");
    expect(slackLink("javascript:alert(1)", "open")).toBe("open");
    expect(slackLink("not a url", "open")).toBe("open");
  });
});

describe("renderEnrichment", () => {
  it("puts the bottom line, the links, the findings and the mitigations in one message when they fit", () => {
    const messages = renderEnrichment({ result, title: "High latency on checkout" });
    expect(messages).toHaveLength(1);
    const texts = sectionTexts(messages[0] ?? { text: "", blocks: [] });
    expect(texts[0]).toContain("*High latency on checkout*");
    expect(texts[0]).toContain("p99 latency came first");
    expect(texts[1]).toContain("<https://grafana.example/d/1?var-service=checkout|p99 latency>");
    expect(texts.some((text) => text.startsWith("*Golden signals*") && text.includes("_service: checkout_"))).toBe(true);
    expect(texts.some((text) => text.includes("• p99 latency rose 4.1× since 14:02 UTC — <https://grafana.example/d/1?var-service=checkout|open>"))).toBe(true);
    expect(
      texts.some(
        (text) => text.includes("*Roll back checkout*  <https://argocd.example/applications/checkout|Open in argocd>") && text.includes("revision: v1.2.2"),
      ),
    ).toBe(true);
    expect(messages[0]?.text).toContain("High latency on checkout: Around 14:05 UTC");
    for (const block of messages[0]?.blocks ?? []) if (block.type === "section") expect(block.text.verbatim).toBe(true);
  });

  it("links the investigation's page first among the links, when the result has one", () => {
    const pageUrl = "https://pes.example.com/view/execution/0b9c7f4e-1d7a-4b8e-9f51-5e6f7a8b9c0d?org=acme&exp=1795000000&sig=abc";
    const [message] = renderEnrichment({ result: { ...result, pageUrl } });
    const links = sectionTexts(message ?? { text: "", blocks: [] }).find((text) => text.startsWith("*Links:*"));
    expect(links).toBe(
      "*Links:* <https://pes.example.com/view/execution/0b9c7f4e-1d7a-4b8e-9f51-5e6f7a8b9c0d?org=acme&amp;exp=1795000000&amp;sig=abc|Investigation page>  ·  " +
        "<https://grafana.example/d/1?var-service=checkout|p99 latency>  ·  <https://grafana.example/d/2|error ratio>  ·  <https://deploys.example/checkout|Last deploy of checkout>",
    );
  });

  it("lists each action under its gadget when told which gadget it belongs to", () => {
    const [message] = renderEnrichment({ result, actionGadgets: [0, 0, 1] });
    const texts = sectionTexts(message ?? { text: "", blocks: [] });
    const changes = texts.find((text) => text.startsWith("*Changes*")) ?? "";
    expect(changes).toContain("Last deploy of checkout: v1.2.3 at 14:01 UTC — <https://deploys.example/checkout|open>");
    expect(changes).not.toContain("error ratio");
    expect(texts.some((text) => text.startsWith("*Action results*"))).toBe(false);
  });

  it("shows every alert-derived value as text: no mention, no link, no foreign URL made clickable", () => {
    const hostile: PlaybookExecutionResult = {
      highlights: "Around 14:05 UTC for pod=<!channel>: see <https://evil.example|click here>",
      error: "<!here> failed",
      gadgetsHighlights: [{ title: "<@U123> gadget", args: { pod: "<!channel>" }, highlights: "<https://evil.example|grafana>" }],
      actionResults: [{ title: "<!subteam^S1>", shortAnswer: "<https://evil.example|ok>", mostImportantLink: "javascript:alert(1)" }],
      actionableMitigations: [
        { toolName: "<!channel>", customName: "<https://evil.example|Restart>", url: "https://ok.example/x", action: { cmd: "<!everyone>" } },
      ],
    };
    const text = allText(renderEnrichment({ result: hostile, title: "<!channel> down" }));
    for (const raw of ["<!channel>", "<!here>", "<@U123>", "<!subteam", "<https://evil", "<!everyone>", "javascript:"]) {
      expect(text).not.toContain(raw);
    }
    expect(text).toContain("&lt;!channel&gt; down");
    expect(text).toContain("&lt;https://evil.example|click here&gt;");
    expect(text).toContain("<https://ok.example/x|Open in &lt;!channel&gt;>");
    // Every `<` left opens one of our own links.
    expect(text.match(/<[^>]*>/g)?.every((link) => link.startsWith("<https://ok.example/"))).toBe(true);
  });

  it("keeps a huge result within Slack's limits, in order, saying what it left out", () => {
    const long = (seed: string, length: number) => `${seed} `.repeat(Math.ceil(length / (seed.length + 1))).slice(0, length);
    const huge: PlaybookExecutionResult = {
      highlights: long("Bottom & line <x>", 20_000),
      gadgetsHighlights: Array.from({ length: 200 }, (_, index) => ({
        title: `Gadget ${index}`,
        args: { pod: long("p", 2_000) },
        highlights: long(`finding&${index}`, 5_000),
      })),
      actionResults: Array.from({ length: 500 }, (_, index) => ({
        title: `action ${index}`,
        shortAnswer: long("answer", 3_000),
        mostImportantLink: `https://grafana.example/d/${index}?q=${"x".repeat(1_500)}`,
      })),
      actionableMitigations: Array.from({ length: 100 }, (_, index) => ({
        toolName: "tool",
        customName: `fix ${index}`,
        action: Object.fromEntries(Array.from({ length: 50 }, (_, key) => [`k${key}`, long("v", 1_000)])),
      })),
    };
    const messages = renderEnrichment({ result: huge, title: long("title", 5_000) });
    expect(messages).toHaveLength(5);
    for (const message of messages) {
      expect(message.blocks.length).toBeLessThanOrEqual(SLACK_LIMITS.blocksPerMessage);
      const texts = sectionTexts(message);
      for (const text of texts) expect(text.length).toBeLessThanOrEqual(SLACK_LIMITS.sectionChars);
      expect(texts.join("").length).toBeLessThanOrEqual(SLACK_LIMITS.messageChars);
      expect(message.blocks[0]?.type).toBe("section");
      expect(message.text.length).toBeLessThanOrEqual(1_100);
    }
    // The bottom line comes first and is not cut at its first 3000 characters.
    const first = sectionTexts(messages[0] ?? { text: "", blocks: [] });
    expect(first[0]).toMatch(/^:mag: \*title title/);
    expect(first[1]).toMatch(/^Bottom &amp; line &lt;x&gt;/);
    expect(first.slice(1, 3).join("").length).toBeGreaterThan(5_000);
    expect(sectionTexts(messages[4] ?? { text: "", blocks: [] }).at(-1)).toMatch(/^_\d+ more sections not shown/);
    // No entity or link is left cut open.
    for (const text of messages.flatMap(sectionTexts)) {
      expect(text).not.toMatch(/&[a-z]{0,3}$|&[a-z]{0,3}[^a-z;]/);
      expect((text.match(/</g) ?? []).length).toBe((text.match(/>/g) ?? []).length);
    }
  });

  it("fits one message when asked for one (a batch item)", () => {
    const many: PlaybookExecutionResult = { ...result, gadgetsHighlights: Array.from({ length: 80 }, (_, index) => ({ title: `G${index}`, highlights: "x" })) };
    const messages = renderEnrichment({ result: many, heading: "Issue 3 of 100" }, { maxMessages: 1 });
    expect(messages).toHaveLength(1);
    expect(messages[0]?.blocks.length).toBeLessThanOrEqual(50);
    expect(sectionTexts(messages[0] ?? { text: "", blocks: [] })[0]).toMatch(/^_Issue 3 of 100_/);
  });
});
