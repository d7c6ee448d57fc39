import { hasByteOrderMark } from "../http-client.js";

/**
 * A Prometheus answer read one series at a time. A range answer near the 32 MiB cap holds a million
 * samples or more: parsed whole, its objects take about four times its size in the heap, on top of the
 * text. Here the answer stays bytes (outside the heap); only its envelope (status, resultType, warnings)
 * is parsed at once, and each series is parsed when the analysis reaches it, then dropped.
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;
/** The only keys the scan reads: `data` and `result`; anything longer is not one of them. */
const MAX_KEY_BYTES = 8;

/** An answer split around its `data.result` array. */
export interface SplitAnswer {
  /** The answer with `data.result` emptied (`[]`): small, for JSON.parse. */
  envelope: string;
  /** The bytes of each element of `data.result`, each one JSON value. */
  elements: Array<readonly [start: number, end: number]>;
}

/**
 * Finds the elements of `data.result` without parsing them: a scan that follows strings, escapes and
 * nesting, and reads only the keys `data` and `result`. Undefined when the bytes are not such an answer
 * whose elements are objects or arrays (an error answer, a scalar, something that is not JSON): the
 * caller then parses them whole, which says what is wrong, as it always did.
 */
export function splitAnswer(body: Buffer): SplitAnswer | undefined {
  const start = hasByteOrderMark(body) ? 3 : 0;
  const kinds: number[] = [];
  const keys: Array<string | undefined> = [];
  let lastString: string | undefined;
  let resultStart = -1;
  let resultEnd = -1;
  let elementStart = -1;
  const elements: Array<readonly [number, number]> = [];
  const inResult = () => resultStart >= 0 && resultEnd < 0 && kinds.length === 3;

  for (let i = start; i < body.length; i += 1) {
    const byte = body[i];
    if (byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09) continue;
    if (inResult() && elementStart < 0 && byte !== OPEN_OBJECT && byte !== OPEN_ARRAY && byte !== COMMA && byte !== CLOSE_ARRAY) {
      return undefined; // a scalar or string result: small, parsed whole
    }
    switch (byte) {
      case QUOTE: {
        const from = i + 1;
        for (i = from; i < body.length && body[i] !== QUOTE; i += 1) {
          if (body[i] === BACKSLASH) i += 1;
        }
        if (i >= body.length) return undefined;
        lastString = kinds.length <= 2 && i - from <= MAX_KEY_BYTES ? body.toString("latin1", from, i) : undefined;
        break;
      }
      case COLON:
        keys[kinds.length - 1] = lastString;
        break;
      case COMMA:
        if (kinds.at(-1) === OPEN_OBJECT) keys[kinds.length - 1] = undefined;
        break;
      case OPEN_OBJECT:
      case OPEN_ARRAY:
        if (inResult()) elementStart = i;
        if (byte === OPEN_ARRAY && kinds.length === 2 && keys[0] === "data" && keys[1] === "result" && kinds[1] === OPEN_OBJECT) {
          if (resultStart >= 0) return undefined; // two of them: let JSON.parse decide
          resultStart = i;
        }
        kinds.push(byte);
        keys.push(undefined);
        break;
      case CLOSE_OBJECT:
      case CLOSE_ARRAY: {
        const open = kinds.pop();
        keys.pop();
        if (open !== (byte === CLOSE_OBJECT ? OPEN_OBJECT : OPEN_ARRAY)) return undefined;
        if (inResult() && elementStart >= 0) {
          elements.push([elementStart, i + 1]);
          elementStart = -1;
        } else if (resultStart >= 0 && resultEnd < 0 && kinds.length === 2) {
          resultEnd = i + 1;
        }
        break;
      }
      default:
        break;
    }
  }
  if (kinds.length !== 0 || resultStart < 0 || resultEnd < 0) return undefined;
  return {
    envelope: `${body.toString("utf8", start, resultStart)}[]${body.toString("utf8", resultEnd)}`,
    elements,
  };
}
