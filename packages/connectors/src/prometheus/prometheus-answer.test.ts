import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { splitAnswer } from "./prometheus-answer.js";

/** What JSON.parse of the whole answer gives, rebuilt from the split: the envelope and each element. */
function rebuilt(text: string): unknown {
  const body = Buffer.from(text);
  const split = splitAnswer(body);
  if (split === undefined) return undefined;
  const envelope = JSON.parse(split.envelope) as { data: { result: unknown[] } };
  envelope.data.result = split.elements.map(([start, end]) => JSON.parse(body.toString("utf8", start, end)) as unknown);
  return envelope;
}

const labels = fc.dictionary(fc.string({ unit: "binary", maxLength: 12 }), fc.string({ unit: "binary", maxLength: 20 }), { maxKeys: 4 });
const sample = fc.tuple(fc.integer({ min: 1_600_000_000, max: 1_900_000_000 }), fc.oneof(fc.double().map(String), fc.constantFrom("NaN", "+Inf", "-Inf")));
const matrix = fc.array(fc.record({ metric: labels, values: fc.array(sample, { maxLength: 5 }) }), { maxLength: 6 });
const vector = fc.array(fc.record({ metric: labels, value: sample }), { maxLength: 6 });

describe("splitAnswer", () => {
  it("property: envelope and elements give back exactly what parsing the whole answer gives", () => {
    fc.assert(
      fc.property(
        fc.oneof(
          matrix.map((result) => ({ resultType: "matrix", result })),
          vector.map((result) => ({ resultType: "vector", result })),
        ),
        fc.boolean(),
        fc.option(fc.array(fc.string({ unit: "binary" }), { maxLength: 2 }), { nil: undefined }),
        fc.constantFrom(undefined, 0, 2, "\t"),
        (data, dataFirst, warnings, indent) => {
          const answer = dataFirst
            ? { data, status: "success", ...(warnings ? { warnings } : {}) }
            : { status: "success", ...(warnings ? { warnings } : {}), data };
          const text = JSON.stringify(answer, null, indent);
          expect(rebuilt(text)).toEqual(JSON.parse(text));
        },
      ),
    );
  });

  it("finds the result among keys that look like it, and after a byte-order mark", () => {
    const text =
      '\uFEFF{"stats":{"result":[{"x":1}]},"data":{"result":[{"metric":{"k":"\\"result\\":["},"values":[]}],"resultType":"matrix"},"status":"success"}';
    expect(rebuilt(text)).toEqual(JSON.parse(text.slice(1)));
    expect(splitAnswer(Buffer.from(text))?.elements).toHaveLength(1);
  });

  it.each([
    ["an error answer", '{"status":"error","errorType":"bad_data","error":"parse error"}'],
    ["a scalar", '{"status":"success","data":{"resultType":"scalar","result":[1700000000,"1"]}}'],
    ["a string", '{"status":"success","data":{"resultType":"string","result":[1700000000,"x"]}}'],
    ["something that is not JSON", "<html>login</html>"],
    ["a cut answer", '{"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"values":[[1,"1"]'],
    ["mismatched brackets", '{"status":"success","data":{"resultType":"matrix","result":[{"metric":{}]}]}}'],
    ["an unterminated string", '{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"a":"b}}]}}'],
    ["two results", '{"data":{"result":[{}],"result":[{}]}}'],
  ])("leaves %s to be parsed whole", (_case, text) => {
    expect(splitAnswer(Buffer.from(text))).toBeUndefined();
  });
});
