import { describe, expect, it } from "vitest";
import { BUILT_IN_REDACTION_KINDS, luhnValid, type BuiltInRedactionKind } from "./redaction-detectors.js";
import { customPatternProblem } from "./redaction-pattern-check.js";
import { compileRedaction, createRedactor, DEFAULT_REDACTION_POLICY, type RedactionPolicy } from "./redactor.js";

const TOKEN = /«([a-z0-9-]+):([0-9a-f]{8})»/g;

/** The kinds of the tokens in a text, in order. */
function kindsIn(text: string): string[] {
  return [...text.matchAll(TOKEN)].map((match) => match[1] ?? "");
}

function redactorWith(policy: Partial<RedactionPolicy> = {}) {
  return createRedactor(compileRedaction({ ...DEFAULT_REDACTION_POLICY, ...policy }));
}

/** A sample of each built-in kind, as data sources write them. */
const SAMPLES: Record<BuiltInRedactionKind, string[]> = {
  email: ["jane.doe@example.com", "ops+pager@mail.example.co.uk"],
  ipv4: ["203.0.113.7", "10.0.1.2"],
  ipv6: ["2001:db8::8a2e:370:7334", "fe80::1", "::ffff:192.0.2.1"],
  bearer: ["Bearer abcdefgh12345678"],
  "api-key": [
    "sk-proj-abcdefghijklmnopqrstuvwx",
    "xoxb-1234567890-abcdefghij",
    "AKIAIOSFODNN7EXAMPLE",
    "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
    "glpat-abcdefghijklmnopqrst",
  ],
  card: ["4111 1111 1111 1111", "5500-0000-0000-0004", "378282246310005"],
  jwt: ["eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"],
};

describe("the built-in detectors", () => {
  for (const kind of BUILT_IN_REDACTION_KINDS) {
    it(`redacts ${kind} values inside a log line, and nothing around them`, () => {
      const redactor = redactorWith();
      for (const sample of SAMPLES[kind]) {
        const redacted = redactor.text(`level=warn msg="login by ${sample} refused" code=401`);
        expect(redacted).not.toContain(sample.replace(/^Bearer /, ""));
        expect(kindsIn(redacted)).toEqual([kind]);
        expect(redacted.startsWith('level=warn msg="login by ')).toBe(true);
        expect(redacted.endsWith(' refused" code=401')).toBe(true);
      }
    });

    it(`leaves ${kind} values when the organization turns ${kind} off`, () => {
      const detectors = new Set(BUILT_IN_REDACTION_KINDS.filter((other) => other !== kind));
      const redactor = redactorWith({ detectors });
      // The first sample of each kind holds no value of another kind (an IPv6 address's IPv4 tail does).
      const sample = SAMPLES[kind][0];
      expect(redactor.text(`seen ${sample} twice`)).toBe(`seen ${sample} twice`);
    });
  }

  it("keeps the word Bearer and replaces the credential only", () => {
    expect(redactorWith().text("Authorization: Bearer abcdefgh12345678").startsWith("Authorization: Bearer «bearer:")).toBe(true);
  });

  it("never takes the digits of a decimal or inside a word for a card: a sample value or a trace id whose digits pass the Luhn check", () => {
    const redactor = redactorWith();
    for (const value of ["0.4111111111111111", "0.30000000000000004", "4111111111111111.5", "1,4111111111111111", "trace_id=ab4111111111111111cd"]) {
      expect(redactor.text(`value ${value}`)).toBe(`value ${value}`);
    }
    expect(redactor.text("cards: 4111111111111111, 5500000000000004.")).not.toMatch(/\d{13}/);
  });

  it("does not take a 16-digit number that fails the Luhn check for a card", () => {
    const redactor = redactorWith();
    for (const number of ["4111 1111 1111 1112", "4111111111111112", "5500000000000005"]) {
      expect(redactor.text(`order ${number} shipped`)).toBe(`order ${number} shipped`);
    }
  });

  it("checks the Luhn digit as ISO/IEC 7812 defines it", () => {
    expect(luhnValid("79927398713")).toBe(true);
    expect(luhnValid("79927398710")).toBe(false);
    expect(luhnValid("4111111111111111")).toBe(true);
    expect(luhnValid("411111111111111a")).toBe(false);
  });

  it("leaves what only looks like an address: versions, times, MAC addresses, out-of-range quads, epochs in ms", () => {
    const redactor = redactorWith();
    for (const text of ["version 1.2.3.4.5", "at 12:30:45", "mac 00:1a:2b:3c:4d:5e", "from 999.1.1.1", "ts=1763650800000", "0.40000", "latency 1.23e-4"]) {
      expect(redactor.text(text)).toBe(text);
    }
  });
});

describe("tokens", () => {
  it("give the same value the same token and different values different ones, within one execution", () => {
    const redactor = redactorWith();
    const first = redactor.text("a@example.com called b@example.com");
    const again = redactor.text("then a@example.com again");
    const [a, b] = [...first.matchAll(TOKEN)].map((match) => match[0]);
    const [a2] = [...again.matchAll(TOKEN)].map((match) => match[0]);
    expect(a).toBeDefined();
    expect(a).not.toBe(b);
    expect(a2).toBe(a);
  });

  it("differ between two executions: the salt is drawn for each", () => {
    const compiled = compileRedaction(DEFAULT_REDACTION_POLICY);
    expect(createRedactor(compiled).text("a@example.com")).not.toBe(createRedactor(compiled).text("a@example.com"));
  });

  it("are left alone when a text passes twice", () => {
    const redactor = redactorWith({ labels: ["user"] });
    const once = redactor.text("user=jane from 10.0.0.1 card 4111111111111111");
    expect(redactor.text(once)).toBe(once);
  });
});

describe("an organization's own patterns and labels", () => {
  it("redacts with its patterns, named for their tokens", () => {
    const redactor = redactorWith({ patterns: [{ name: "employee-id", regex: "EMP-[0-9]{5}" }] });
    expect(kindsIn(redactor.text("owner EMP-12345 paged"))).toEqual(["employee-id"]);
  });

  it("redacts the whole value of a listed label, as a field and in name=value or JSON text", () => {
    const redactor = redactorWith({ labels: ["customer"] });
    const value = redactor.value({ metric: { customer: "acme corp", pod: "checkout-1" }, line: 'customer="acme corp" status=500 {"customer":"acme corp"}' });
    expect(value.metric.pod).toBe("checkout-1");
    expect(kindsIn(value.metric.customer)).toEqual(["label"]);
    expect(value.line).not.toContain("acme corp");
    expect(kindsIn(value.line)).toEqual(["label", "label"]);
    const written = redactor.text("customer=acme corp, pod=checkout-1 customer=acme status=500");
    expect(written.startsWith("customer=«label:")).toBe(true);
    expect(written).not.toContain("corp");
    expect(written).toContain(", pod=checkout-1 customer=«label:");
    expect(written.endsWith("» status=500")).toBe(true);
  });
});

describe("a value's redaction", () => {
  it("copies what changed, keeps dates and numbers, and gives one object twice one copy twice", () => {
    const redactor = redactorWith();
    const shared = { text: "from 10.0.0.1" };
    const untouched = { text: "nothing here", at: new Date(0) };
    const value = redactor.value({ first: shared, second: shared, untouched, count: 3 });
    expect(value.first).toBe(value.second);
    expect(value.first).not.toBe(shared);
    expect(value.untouched).toBe(untouched);
    expect(value.count).toBe(3);
  });

  it("keeps a lazy list lazy, redacts its items as they are read, and writes it to JSON as an array", () => {
    const redactor = redactorWith();
    let reads = 0;
    const lazy = {
      *[Symbol.iterator]() {
        reads += 1;
        yield { instance: "10.0.0.1:9100" };
      },
    };
    const value = redactor.value({ result: lazy });
    expect(reads).toBe(0);
    const [item] = [...value.result];
    expect(kindsIn(item?.instance ?? "")).toEqual(["ipv4"]);
    expect(JSON.parse(JSON.stringify(value)).result).toHaveLength(1);
  });
});

describe("a custom pattern's check", () => {
  it("accepts linear patterns", () => {
    for (const source of ["EMP-[0-9]{5}", "cust_[a-z0-9]{8}", "(ab)+c", "[(|)]+x"]) expect(customPatternProblem(source)).toBeUndefined();
  });

  it("refuses what can backtrack exponentially, what does not compile and what matches nothing at all", () => {
    for (const source of ["(a+)+b", "(a|ab)*c", "((ab)*)+", "(x)\\1", "(?=a)b", "(?<!a)b", "(?<n>a)", "a(", "a*", "[b-a]"]) {
      expect(customPatternProblem(source), source).toBeDefined();
    }
  });
});

describe("fields kept as they are", () => {
  it("are kept wherever they are, and the rest redacted", () => {
    const value = redactorWith().value({ items: [{ link: "http://10.0.0.5:9090/graph", text: "from 10.0.0.5" }] }, new Set(["link"]));
    expect(value.items[0]?.link).toBe("http://10.0.0.5:9090/graph");
    expect(kindsIn(value.items[0]?.text ?? "")).toEqual(["ipv4"]);
  });
});
