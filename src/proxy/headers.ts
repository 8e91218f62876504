/** Headers that describe one connection, not the message: never forwarded (RFC 9110 §7.6.1). */
export const HOP_BY_HOP: ReadonlySet<string> = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "proxy-authorization",
  "proxy-authenticate",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
]);

/**
 * The end-to-end headers of a message in node's raw form ([name, value, name, value, …]), with their
 * original case and order, minus hop-by-hop headers and those the Connection header names.
 */
export function endToEndRawHeaders(raw: readonly string[], keep: ReadonlySet<string> = NONE, drop: readonly string[] = []): string[] {
  const named = connectionTokens(raw);
  const out: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    const dropped = HOP_BY_HOP.has(name) || drop.includes(name) || (named !== null && named.has(name));
    if (!dropped || keep.has(name)) out.push(raw[i]!, raw[i + 1]!);
  }
  return out;
}

/** The names the Connection headers list, lower-cased; null when there is no Connection header (nearly always). */
function connectionTokens(raw: readonly string[]): Set<string> | null {
  let named: Set<string> | null = null;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!;
    if (name.length !== 10 || name.toLowerCase() !== "connection") continue;
    for (const token of raw[i + 1]!.split(",")) (named ??= new Set()).add(token.trim().toLowerCase());
  }
  return named;
}

const NONE: ReadonlySet<string> = new Set();

/** First value of a header from node's parsed headers. */
export function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** The values of the header lines of `raw` (name, value, ...) that carry the field `name` (lower-case), as received. */
export function headerLines(raw: readonly string[] | undefined, name: string): string[] {
  const out: string[] = [];
  if (raw) for (let i = 0; i + 1 < raw.length; i += 2) if (raw[i]!.toLowerCase() === name) out.push(raw[i + 1]!);
  return out;
}
