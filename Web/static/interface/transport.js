// The transport bar's arithmetic: positions as people type them, and the position the bar shows.
// Pure functions, used by status.js and controls.js and tested under Node.

/**
 * Seconds from what a person types into the position field, as `coplay control … seek` takes it
 * (Sources/coplay/TimeText.swift): `SECONDS`, `M:SS` or `H:MM:SS`, each with an optional fraction on
 * the seconds (`90`, `2.5`, `1:30`, `1:02:03`, `0:06.5`); null for anything else (negative, signs or
 * exponents, minutes or seconds of 60 and more after a colon, empty parts).
 *
 * ```js
 * parsePosition("1:30"); // 90
 * parsePosition("1:02:03"); // 3723
 * parsePosition("1:75"); // null
 * ```
 */
export function parsePosition(text) {
  if (typeof text !== "string") return null;
  const parts = text.trim().split(":");
  if (parts.length < 1 || parts.length > 3 || parts.some((part) => part === "")) return null;
  if (!parts.every((part) => /^[0-9.]+$/.test(part))) return null;
  const last = Number(parts[parts.length - 1]);
  if (!Number.isFinite(last)) return null;
  if (parts.length === 1) return last;
  if (last >= 60) return null;
  const units = parts.slice(0, -1);
  if (!units.every((part) => /^[0-9]+$/.test(part))) return null;
  const values = units.map(Number);
  if (values.length === 2 && values[1] >= 60) return null;
  return values.reduce((sum, value) => sum * 60 + value, 0) * 60 + last;
}

/**
 * The position the time display and the seek bar show (seconds): the group's item time, but the end of
 * the media when the page shows its last picture (`atEnd`: the player reached or is held at the end) or
 * the group's time is past it, and never below 0. Without a known duration, the group's time.
 *
 * @param {{position: number, duration: number, atEnd?: boolean}} p
 */
export function shownPosition({ position, duration, atEnd = false }) {
  const time = Number.isFinite(position) ? Math.max(0, position) : 0;
  if (!(duration > 0) || !Number.isFinite(duration)) return time;
  return atEnd ? duration : Math.min(time, duration);
}
