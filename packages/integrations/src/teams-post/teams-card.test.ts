import type { PlaybookExecutionResult } from "@pes/contracts";
import { describe, expect, it } from "vitest";
import { cardText } from "./card-text.js";
import { markOf, renderTeamsBatchRoot, renderTeamsMessage, TEAMS_LIMITS, type TeamsChatMessage } from "./teams-card.js";

const result: PlaybookExecutionResult = {
  highlights: "Around 14:05 UTC for service=checkout: p99 latency rose 4.1×.\nLikely cause: deploy checkout@v42 at 14:02 UTC.",
  gadgetsHighlights: [{ title: "Golden signals", args: { service: "checkout" }, highlights: "p99 latency rose 4.1× since 14:02 UTC." }],
  actionResults: [{ title: "p99 latency", shortAnswer: "p99 latency rose 4.1× since 14:02 UTC", mostImportantLink: "https://grafana.example/d/1" }],
  actionableMitigations: [{ toolName: "argocd", customName: "Roll back checkout", url: "https://argocd.example/app/checkout", action: { revision: "v41" } }],
};

interface Card {
  type: string;
  version: string;
  body: Element[];
  actions?: Element[];
}
type Element = Record<string, unknown> & { type: string };

function cardOf(message: TeamsChatMessage): Card {
  return JSON.parse(message.attachments[0].content) as Card;
}

/** Every element of the card, nested ones included (ActionSets' actions, RichTextBlocks' runs). */
function elements(card: Card): Element[] {
  const all: Element[] = [];
  const visit = (value: unknown) => {
    if (Array.isArray(value)) return value.forEach(visit);
    if (typeof value !== "object" || value === null) return;
    if ("type" in value && typeof value.type === "string") all.push(value as Element);
    for (const child of Object.values(value)) visit(child);
  };
  visit(card.body);
  visit(card.actions);
  return all;
}

const texts = (card: Card) => elements(card).flatMap((element) => (element.type === "TextRun" ? [String(element.text)] : []));
const urls = (card: Card) => elements(card).flatMap((element) => (typeof element.url === "string" ? [element.url] : []));

describe("renderTeamsMessage", () => {
  it("shows the bottom line first, then links, findings and mitigations, as one Adaptive Card placed in the message", () => {
    const message = renderTeamsMessage({ result, title: "High latency on checkout" }, markOf("exec-1:t/c:0"));
    const card = cardOf(message);

    expect(message.body).toEqual({ contentType: "html", content: `<attachment id="${markOf("exec-1:t/c:0")}"></attachment>` });
    expect(message.attachments[0]).toMatchObject({ id: markOf("exec-1:t/c:0"), contentType: "application/vnd.microsoft.card.adaptive" });
    expect(card).toMatchObject({ type: "AdaptiveCard", version: "1.5" });
    expect(texts(card)).toEqual([
      "High latency on checkout",
      "Around 14:05 UTC for service=checkout: p99 latency rose 4.1×.",
      "Likely cause: deploy checkout@v42 at 14:02 UTC.",
      "Golden signals",
      "p99 latency rose 4.1× since 14:02 UTC.",
      "service: checkout",
      "Action results",
      "• p99 latency rose 4.1× since 14:02 UTC",
      "Mitigations",
      "• Roll back checkout",
      "revision: v41",
    ]);
    expect(urls(card)).toEqual(["https://grafana.example/d/1", "https://grafana.example/d/1", "https://argocd.example/app/checkout"]);
    expect(message.summary).toBe(
      "High latency on checkout: Around 14:05 UTC for service=checkout: p99 latency rose 4.1×. Likely cause: deploy checkout@v42 at 14:02 UTC.",
    );
  });

  it("shows each chart as an image by its signed URL and links the full result, never inlining an image", () => {
    const charts = [
      { title: "p99 latency of checkout", url: "https://pes.example/charts/abc.png?sig=1" },
      { title: "not https", url: "http://pes.example/charts/plain.png" },
      { title: "inline", url: "data:image/png;base64,AAAA" },
    ];
    const card = cardOf(renderTeamsMessage({ result, charts, pageUrl: "https://pes.example/r/1?sig=2" }, "m"));

    expect(elements(card).filter((element) => element.type === "Image")).toEqual([
      { type: "Image", url: "https://pes.example/charts/abc.png?sig=1", altText: "p99 latency of checkout", size: "Stretch" },
    ]);
    expect(card.actions).toEqual([{ type: "Action.OpenUrl", title: "Open the full result", url: "https://pes.example/r/1?sig=2" }]);
  });

  it("keeps alert values as text: no Markdown, mention, link or date function, and no line break in a title", () => {
    const hostile: PlaybookExecutionResult = {
      highlights: "pod=**bold** [link](http://evil.example) <at>Everyone</at> {{DATE(2017-02-14T06:00:00Z, SHORT)}}",
      gadgetsHighlights: [{ title: "Pods\n- injected list item", args: { pod: "[x](javascript:alert(1))" } }],
      actionResults: [{ title: "[click](http://evil.example)", shortAnswer: "<at>channel</at>", mostImportantLink: "javascript:alert(1)" }],
      actionableMitigations: [{ toolName: "t", customName: "**run**", url: "file:///etc/passwd" }],
    };
    const message = renderTeamsMessage({ result: hostile, title: "Alert\n# heading" }, "m");
    const card = cardOf(message);

    // Alert-derived text is only ever in TextRuns (which read no Markdown); no TextBlock at all.
    expect(elements(card).some((element) => element.type === "TextBlock")).toBe(false);
    expect(texts(card)).toContain("pod=**bold** [link](http://evil.example) <at>Everyone</at> {\u2060{DATE(2017-02-14T06:00:00Z, SHORT)}}");
    expect(texts(card)).toContain("Alert # heading");
    expect(texts(card)).toContain("Pods - injected list item");
    expect(texts(card)).toContain("• <at>channel</at>");
    expect(message.attachments[0].content).not.toContain("{{DATE");
    // Links are only made from http(s) URLs.
    expect(urls(card)).toEqual([]);
    expect(message.body.content).toBe('<attachment id="m"></attachment>');
  });

  it("keeps a huge result under Teams' message size, saying how many findings and mitigations were left out", () => {
    const long = (seed: string, length: number) => `${seed} `.repeat(Math.ceil(length / (seed.length + 1))).slice(0, length);
    const huge: PlaybookExecutionResult = {
      highlights: long('bottom "line"', 30_000),
      gadgetsHighlights: Array.from({ length: 300 }, (_, index) => ({ title: long(`gadget ${index}`, 500), highlights: long('finding \\ "quoted"', 8_000) })),
      actionResults: Array.from({ length: 300 }, (_, index) => ({
        title: `a${index}`,
        shortAnswer: long("answer", 5_000),
        mostImportantLink: `https://grafana.example/${index}`,
      })),
      actionableMitigations: Array.from({ length: 50 }, () => ({ toolName: "t", action: { cmd: long("x", 5_000) } })),
    };
    const charts = Array.from({ length: 20 }, (_, index) => ({ title: `chart ${index}`, url: `https://pes.example/c/${index}?sig=${"s".repeat(1_900)}` }));
    const message = renderTeamsMessage({ result: huge, charts, pageUrl: "https://pes.example/r/huge" }, "m");
    const card = cardOf(message);

    expect(Buffer.byteLength(JSON.stringify(message))).toBeLessThanOrEqual(TEAMS_LIMITS.messageBytes);
    const last = texts(card).at(-1);
    expect(last).toMatch(/^…and \d+ more findings and 50 more mitigations not shown: the result is larger than a Teams message \(28 KB\)\.$/);
    // The bottom line comes first, cut with an ellipsis; the full result stays a click away.
    expect(texts(card)[1]).toMatch(/^bottom "line" .*…$/);
    expect(card.actions).toEqual([{ type: "Action.OpenUrl", title: "Open the full result", url: "https://pes.example/r/huge" }]);
    const shownFindings = texts(card).filter((text) => /^gadget \d+/.test(text)).length;
    expect(Number(/…and (\d+) more findings/.exec(last ?? "")?.[1]) + shownFindings).toBe(301);
  });

  it("gives the same message for the same view, so that a retry posts the same thing", () => {
    expect(renderTeamsMessage({ result, title: "t" }, "m")).toEqual(renderTeamsMessage({ result, title: "t" }, "m"));
  });
});

describe("renderTeamsBatchRoot", () => {
  it("says what the batch is and that each issue follows in the thread", () => {
    const card = cardOf(renderTeamsBatchRoot({ title: "node-cpu **x**", itemCount: 3 }, "m"));
    expect(texts(card)).toEqual(["node-cpu **x** — 3 issues", "The findings for each issue follow in this thread, one reply per issue, in order."]);
  });
});

describe("cardText", () => {
  it("drops control characters, keeps line breaks, and cuts between code points", () => {
    expect(cardText("a\u0000b\r\nc\u0007", 100)).toBe("ab\nc");
    expect(cardText("ab😀cd", 4)).toBe("ab…");
  });
});
