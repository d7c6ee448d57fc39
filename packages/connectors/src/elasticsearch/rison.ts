/** A value rison can write: JSON's. */
export type RisonValue = string | number | boolean | null | readonly RisonValue[] | { readonly [key: string]: RisonValue };

// Rison's ids: no character of " '!:(),*@$", and not starting with "-" or a digit.
const ID = /^[^-0-9 '!:(),*@$][^ '!:(),*@$]*$/;

/**
 * A value in rison (https://github.com/Nanonid/rison), the URL-friendly JSON that Kibana's and OpenSearch
 * Dashboards' links hold their state in: `(a:1,b:!(x,'y z'),c:!t)`. Strings that are ids stay bare, any
 * other is quoted with `'`, whose `!` and `'` are escaped with `!`. Written here rather than taken from
 * npm: the packages there (rison, rison-node) are unmaintained for years, and the encoder is these lines.
 * @throws RangeError on a number that is not finite (rison, like JSON, has none).
 */
export function rison(value: RisonValue): string {
  if (value === null) return "!n";
  if (value === true) return "!t";
  if (value === false) return "!f";
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new RangeError(`rison cannot write ${value}`);
    return String(value);
  }
  if (typeof value === "string") return risonString(value);
  if (isList(value)) return `!(${value.map(rison).join(",")})`;
  return `(${Object.entries(value)
    .map(([key, item]) => `${risonString(key)}:${rison(item)}`)
    .join(",")})`;
}

function risonString(text: string): string {
  return ID.test(text) ? text : `'${text.replace(/[!']/g, "!$&")}'`;
}

// Array.isArray does not narrow a readonly array out of a union.
function isList(value: RisonValue): value is readonly RisonValue[] {
  return Array.isArray(value);
}
