// The lifecycle's Lua scripts name no key and no answer of their own: every key is below the prefix they
// are given (KEYS[1]) and named by a function of `KEY`, generated from @pes/jobs' redis-keys.ts (whose
// test runs each against its builder), and every answer besides data is a name of SCRIPT_CODES.
import { readdirSync, readFileSync } from "node:fs";
import { organizationKeysLua } from "@pes/jobs";
import { describe, expect, it } from "vitest";
import { SCRIPT_CODES, scriptConstants } from "./script-codes.js";

const SCRIPTS = new URL("../scripts/", import.meta.url);
const scripts = [
  ...readdirSync(SCRIPTS).filter((name) => name.endsWith(".lua")),
  ...readdirSync(new URL("includes/", SCRIPTS)).map((name) => `includes/${name}`),
].map((name) => ({
  name,
  code: readFileSync(new URL(name, SCRIPTS), "utf8")
    .replace(/--\[\[[\s\S]*?\]\]/g, "")
    .replace(/--.*$/gm, ""),
}));

/** The parts of the key names that redis-keys.ts builds for the scripts. */
const KEY_NAME_PARTS = ["execution:", "coalesce:", "lane:", "finished", "batch:", ":batches", ":waiters", ":counted", ":items", ":invalid", ":org:"];

describe("the lifecycle's scripts", () => {
  it("build no key names: no key name in their string literals, nothing joined to KEYS or the prefix", () => {
    expect(scripts.length).toBeGreaterThanOrEqual(5);
    for (const { name, code } of scripts) {
      const literals = [...code.matchAll(/'([^']*)'/g)].map(([, text]) => text ?? "");
      expect({ name, keyNames: literals.filter((text) => KEY_NAME_PARTS.some((part) => text.includes(part))) }).toEqual({ name, keyNames: [] });
      expect({ name, concatenated: /(KEYS\[[^\]]+\]|\bprefix)\s*\.\./.test(code) }).toEqual({ name, concatenated: false });
      // The prefix is only ever handed to KEY's functions.
      const prefixUses = [...code.matchAll(/\bprefix\b/g)].length;
      const handed = [...code.matchAll(/KEY\.\w+\(prefix\b/g)].length;
      expect({ name, prefixOtherwise: prefixUses - handed }).toEqual({ name, prefixOtherwise: /local prefix = KEYS\[1\]/.test(code) ? 1 : 0 });
    }
  });

  it("name their keys with functions of the generated KEY table only", () => {
    const defined = new Set([...organizationKeysLua().matchAll(/^KEY\.(\w+) = function/gm)].map(([, keyName]) => keyName));
    for (const { name, code } of scripts) {
      const used = [...code.matchAll(/KEY\.(\w+)/g)].map(([, keyName]) => keyName ?? "");
      expect({ name, unknown: used.filter((keyName) => !defined.has(keyName)) }).toEqual({ name, unknown: [] });
    }
  });

  it("answer with the codes of script-codes.ts only", () => {
    for (const { name, code } of scripts) {
      const used = [...code.matchAll(/CODE\.(\w+)/g)].map(([, codeName]) => codeName ?? "");
      expect({ name, unknown: used.filter((codeName) => !(codeName in SCRIPT_CODES)) }).toEqual({ name, unknown: [] });
      // A bare number or code string returned is an answer without a name.
      expect({ name, bare: code.match(/return\s+(\{\s*)?(-?\d+|'limit')/g) ?? [] }).toEqual({ name, bare: [] });
    }
    expect(scriptConstants()).toBe(
      "local CODE = { accepted = 1, existed = 0, overLimit = 'limit', recordedAlready = -1, finishedAlready = -1, noSuchExecution = 0 }\nlocal PACE_WINDOW_MS = 60000\n",
    );
  });
});
