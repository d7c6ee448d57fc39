import { describe, expect, it } from "vitest";
import { PlaybookDefinition } from "./playbook-definition.js";
import { templatesOf } from "./playbook-templates.js";

describe("templatesOf", () => {
  it("lists every templated string with its path and target", () => {
    const playbook = PlaybookDefinition.parse({
      name: "p",
      monitorNames: ["Alert {{x}}"],
      gadgets: [
        {
          title: "G {{a}}",
          args: { list: ["{{b}}", 1] },
          actions: [
            { title: "A", dataSource: "m", prometheus: { query: "up{job={{c|regex}}}" } },
            { title: "B", dataSource: "h", http: { path: "/d/{{d}}", link: "https://x/{{e}}", body: { q: { term: "{{f}}" } }, answerField: "n" } },
          ],
        },
      ],
      mitigations: [{ toolName: "T", customName: "C", url: "https://u/{{g}}", action: { k: ["{{h}}"] } }],
    });
    expect(templatesOf(playbook).map(({ path, template, target }) => ({ path, template, target }))).toEqual([
      { path: ["gadgets", 0, "title"], template: "G {{a}}", target: "text" },
      { path: ["gadgets", 0, "args", "list", 0], template: "{{b}}", target: "text" },
      { path: ["gadgets", 0, "actions", 0, "title"], template: "A", target: "text" },
      { path: ["gadgets", 0, "actions", 0, "prometheus", "query"], template: "up{job={{c|regex}}}", target: "promql" },
      { path: ["gadgets", 0, "actions", 1, "title"], template: "B", target: "text" },
      { path: ["gadgets", 0, "actions", 1, "http", "path"], template: "/d/{{d}}", target: "url" },
      { path: ["gadgets", 0, "actions", 1, "http", "link"], template: "https://x/{{e}}", target: "url" },
      { path: ["gadgets", 0, "actions", 1, "http", "body", "q", "term"], template: "{{f}}", target: "json" },
      { path: ["mitigations", 0, "toolName"], template: "T", target: "text" },
      { path: ["mitigations", 0, "customName"], template: "C", target: "text" },
      { path: ["mitigations", 0, "url"], template: "https://u/{{g}}", target: "url" },
      { path: ["mitigations", 0, "action", "k", 0], template: "{{h}}", target: "text" },
    ]);
    // A new URL template field must get its injection tests before it joins this list: http.path and
    // http.link in connectors' http-connector.test.ts, mitigation url in mitigations.test.ts.
    expect(
      templatesOf(playbook)
        .filter(({ target }) => target === "url")
        .map(({ path }) => path.slice(-2)),
    ).toEqual([
      ["http", "path"],
      ["http", "link"],
      [0, "url"],
    ]);
    expect(templatesOf(playbook).flatMap((template) => template.placeholders)).toEqual([
      { name: "a" },
      { name: "b" },
      { name: "c", filter: "regex" },
      { name: "d" },
      { name: "e" },
      { name: "f" },
      { name: "g" },
      { name: "h" },
    ]);
  });
});
