// The lifecycle's Lua scripts name no key and no answer of their own: every key comes in KEYS, built by
// @pes/jobs' redis-keys.ts, and every answer besides data is a name of SCRIPT_CODES.
import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { SCRIPT_CODES, scriptConstants } from "./script-codes.js";

const SCRIPTS = new URL("../scripts/", import.meta.url);
const scripts = [
  ...readdirSync(SCRIPTS).filter((name) => name.endsWith(".lua")),
  ...readdirSync(new URL("includes/", SCRIPTS)).map((name) => `includes/${name}`),
].map((name) => ({ name, code: readFileSync(new URL(name, SCRIPTS), "utf8").replace(/--\[\[[\s\S]*?\]\]/g, "").replace(/--.*$/gm, "") }));

/** The parts of the key names that redis-keys.ts builds for the scripts. */
const KEY_NAME_PARTS = ["execution:", "coalesce:", "lane:", "finished", "batch:", ":batches", ":waiters", ":counted", ":items", ":invalid", ":org:"];

describe("the lifecycle's scripts", () => {
  it("build no key names: no key name in their string literals, and no KEYS concatenated", () => {
    expect(scripts.length).toBeGreaterThanOrEqual(5);
    for (const { name, code } of scripts) {
      const literals = [...code.matchAll(/'([^']*)'/g)].map(([, text]) => text ?? "");
      expect({ name, keyNames: literals.filter((text) => KEY_NAME_PARTS.some((part) => text.includes(part))) }).toEqual({ name, keyNames: [] });
      expect({ name, concatenated: /KEYS\[[^\]]+\]\s*\.\./.test(code) }).toEqual({ name, concatenated: false });
    }
  });

  it("answer with the codes of script-codes.ts only", () => {
    for (const { name, code } of scripts) {
      const used = [...code.matchAll(/CODE\.(\w+)/g)].map(([, codeName]) => codeName ?? "");
      expect({ name, unknown: used.filter((codeName) => !(codeName in SCRIPT_CODES)) }).toEqual({ name, unknown: [] });
      // A bare number or code string returned is an answer without a name.
      expect({ name, bare: code.match(/return\s+(\{\s*)?(-?\d+|'(limit|keys)')/g) ?? [] }).toEqual({ name, bare: [] });
    }
    expect(scriptConstants()).toBe("local CODE = { accepted = 1, existed = 0, overLimit = 'limit', recordedAlready = -1, finishedAlready = -1, needsKeys = 'keys' }\nlocal PACE_WINDOW_MS = 60000\n");
  });
});
