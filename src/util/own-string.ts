/**
 * A string with its own storage. V8 makes a slice (and a regex group, a split part) of 13 characters or more
 * a view that keeps its whole source alive: a credential cut from a 64 KiB body, a name cut from a 1 MB method,
 * kept in a long-lived table, would hold all of it. A round trip through UTF-8 copies; a lone surrogate (never
 * in what we keep) would read U+FFFD.
 */
export function ownString(s: string): string {
  return Buffer.from(s, "utf8").toString("utf8");
}
