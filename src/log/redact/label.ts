/** `[redacted: <type>, <type>]`: what replaced a text, naming every kind of secret found in it once, sorted. */
export function redactedAs(types: Iterable<string>): string {
  return `[redacted: ${[...new Set(types)].sort().join(", ")}]`;
}
