// JSON with exact 64-bit integers.
//
// Swift's JSONEncoder writes Int64/UInt64 values (reference times in nanoseconds, sequence
// numbers, the attosecond half of a Duration) as plain integer literals, many above 2^53, which
// JSON.parse would round. `parseJSON` returns every integer literal outside the safe range as a
// BigInt (other numbers as Number); `stringifyJSON` writes BigInt values as integer literals.

/** Parses JSON text; integer literals beyond Number.MAX_SAFE_INTEGER become BigInt. */
export function parseJSON(text) {
  let i = 0;
  const fail = (what) => {
    throw new SyntaxError(`JSON: ${what} at offset ${i}`);
  };
  const space = () => {
    while (i < text.length && " \t\n\r".includes(text[i])) i++;
  };
  const value = () => {
    space();
    const c = text[i];
    if (c === "{") {
      i++;
      const object = {};
      space();
      if (text[i] === "}") {
        i++;
        return object;
      }
      for (;;) {
        space();
        if (text[i] !== '"') fail("expected a key");
        const key = string();
        space();
        if (text[i++] !== ":") fail("expected ':'");
        object[key] = value();
        space();
        const next = text[i++];
        if (next === "}") return object;
        if (next !== ",") fail("expected ',' or '}'");
      }
    }
    if (c === "[") {
      i++;
      const array = [];
      space();
      if (text[i] === "]") {
        i++;
        return array;
      }
      for (;;) {
        array.push(value());
        space();
        const next = text[i++];
        if (next === "]") return array;
        if (next !== ",") fail("expected ',' or ']'");
      }
    }
    if (c === '"') return string();
    if (text.startsWith("true", i)) return (i += 4), true;
    if (text.startsWith("false", i)) return (i += 5), false;
    if (text.startsWith("null", i)) return (i += 4), null;
    return number();
  };
  const string = () => {
    // Delegate escapes to JSON.parse on the exact literal.
    const start = i;
    i++;
    while (i < text.length && text[i] !== '"') i += text[i] === "\\" ? 2 : 1;
    if (i >= text.length) fail("unterminated string");
    i++;
    return JSON.parse(text.slice(start, i));
  };
  const number = () => {
    const match = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/.exec(text.slice(i, i + 400));
    if (match === null) fail("unexpected character");
    i += match[0].length;
    if (match[2] === undefined && match[3] === undefined) {
      const big = BigInt(match[0]);
      return big >= BigInt(Number.MIN_SAFE_INTEGER) && big <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(big) : big;
    }
    return Number(match[0]);
  };
  const result = value();
  space();
  if (i !== text.length) fail("trailing characters");
  return result;
}

/** Serializes to JSON; BigInt values become integer literals, undefined members are left out. */
export function stringifyJSON(value, indent = 0) {
  const marker = "@coplay-bigint:";
  const text = JSON.stringify(value, (key, v) => (typeof v === "bigint" ? marker + v.toString() : v), indent || undefined);
  return text.replace(new RegExp(`"${marker}(-?[0-9]+)"`, "g"), "$1");
}

/**
 * Whether two parsed JSON values are equal. Numbers compare by value across Number and BigInt
 * (10000000000000000 written by one encoder may be 1e+16 from another), exactly otherwise.
 */
export function jsonEqual(a, b) {
  const numeric = (x) => typeof x === "number" || typeof x === "bigint";
  if (numeric(a) && numeric(b)) {
    if (typeof a === typeof b) return a === b;
    const [n, big] = typeof a === "number" ? [a, b] : [b, a];
    return Number.isInteger(n) && BigInt(n) === big;
  }
  if (a === null || b === null || typeof a !== "object" || typeof b !== "object") return a === b;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) return a.length === b.length && a.every((x, k) => jsonEqual(x, b[k]));
  const keysA = Object.keys(a).filter((k) => a[k] !== undefined);
  const keysB = Object.keys(b).filter((k) => b[k] !== undefined);
  if (keysA.length !== keysB.length) return false;
  return keysA.every((k) => Object.hasOwn(b, k) && jsonEqual(a[k], b[k]));
}
