// JSON as a person reads it: the one pretty-printer the page, the fallback card and the error
// line share. Pure module.

/** Pretty JSON for display; never throws. */
export function prettyJson(value) {
  try {
    const text = JSON.stringify(value === undefined ? null : value, null, 2);
    return text === undefined ? String(value) : text;
  } catch {
    return String(value);
  }
}
