// The page's URL: everything a person needs is in the fragment, which browsers never send to a server
// (not in requests, not in Referer):
//
//   http://HOST:PORT/#invite=<percent-encoded coplay invite>[&media=<URL of the media>][&name=<display name>]
//
// The invite itself ends in `#SECRET`; percent-encoded (`%23`) it is one parameter value. A raw `#` is
// tolerated too (the fragment is everything after the page URL's first `#`), and so is a raw `&` or `?`
// inside the invite's query, as long as the secret comes last. Nothing here logs or sends the invite.

/** Why the fragment cannot be used. */
export class PageURLError extends Error {
  constructor(message) {
    super(message);
    this.name = "PageURLError";
  }
}

const KNOWN = new Set(["invite", "media", "name"]);

function decode(text) {
  try {
    return decodeURIComponent(text.replace(/\+/g, "%20"));
  } catch {
    throw new PageURLError("the page address is not properly percent-encoded");
  }
}

/**
 * Parses the page's fragment (`location.hash`, with or without its leading `#`).
 *
 * @returns {{invite: string|null, media: string|null, name: string|null}} the raw (decoded) values;
 *   the invite is still text, parse it with invite.js.
 * @throws {PageURLError} when the fragment is malformed.
 */
export function parseFragment(hash) {
  let text = hash ?? "";
  if (text.startsWith("#")) text = text.slice(1);
  const result = { invite: null, media: null, name: null };
  if (text.trim() === "") return result;
  // Split on "&" only where a known parameter starts, so a raw invite query ("?aead=...&x=y") or a raw
  // media URL query stays in one piece.
  const parts = [];
  let current = null;
  for (const piece of text.split("&")) {
    const eq = piece.indexOf("=");
    const key = eq < 0 ? piece : piece.slice(0, eq);
    if (KNOWN.has(decode(key)) || current === null) {
      current = { key: decode(key), value: eq < 0 ? "" : piece.slice(eq + 1) };
      parts.push(current);
    } else {
      current.value += "&" + piece;
    }
  }
  for (const { key, value } of parts) {
    if (!KNOWN.has(key)) continue; // unknown parameters are reserved and ignored
    const decoded = decode(value).trim();
    result[key] = decoded === "" ? null : decoded;
  }
  if (result.name !== null) result.name = result.name.slice(0, 64);
  return result;
}

/** The page URL for an invite (what `coplay host` prints for browsers). */
export function pageURL(origin, { invite, media = null, name = null }) {
  let fragment = `invite=${encodeURIComponent(invite)}`;
  if (media !== null) fragment += `&media=${encodeURIComponent(media)}`;
  if (name !== null) fragment += `&name=${encodeURIComponent(name)}`;
  return `${origin.replace(/\/+$/, "")}/#${fragment}`;
}

/** The page's fragment (`#invite=…`) with `invite` in place of its invite, its media and name kept (a move to a successor session). */
export function withInvite(hash, invite) {
  const { media, name } = parseFragment(hash);
  return pageURL("", { invite, media, name }).replace(/^\//, "");
}

/** The relay's WebSocket endpoint on the page's own origin: `ws(s)://HOST/ws`. */
export function webSocketURL(location) {
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  return `${scheme}//${location.host}/ws`;
}

/** Resolves a media URL against the page (relative URLs are allowed). */
export function resolveMediaURL(media, base) {
  try {
    return new URL(media, base).href;
  } catch {
    throw new PageURLError(`the media address "${media.slice(0, 80)}" is not a URL`);
  }
}

/** The last path component of a URL, for display. */
export function fileNameOfURL(url) {
  try {
    const path = new URL(url).pathname;
    const last = path.split("/").filter((p) => p !== "").pop() ?? url;
    return decodeURIComponent(last);
  } catch {
    return url;
  }
}
