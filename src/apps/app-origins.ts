/**
 * The origins an app's HTML loads from or connects to, by the CSP list that must declare them. Written by
 * hand, not with an HTML parser: no parser is a dependency, and only a few shapes matter — a URL in a
 * loading attribute (`<script src>`, `<link href>`, `<iframe src>`, `<base href>`, …), in CSS `url()` or
 * `@import`, in a module `import`, or as the first argument of `fetch`, `WebSocket`, `EventSource`,
 * `sendBeacon` or `XMLHttpRequest.open`. The patterns are linear (no nested quantifiers) and run over a
 * bounded prefix of the HTML.
 */

export type OriginUse = "connectDomains" | "resourceDomains" | "frameDomains" | "baseUriDomains";

export interface OriginSeen {
  origin: string;
  use: OriginUse;
  /** How the HTML uses it: `<script src>`, `fetch()`, … */
  how: string;
}

/** HTML past this many characters is not scanned for origins (a finding says so). */
export const MAX_SCANNED_HTML_CHARS = 2 * 1024 * 1024;
/** Origins reported per app at most. */
const MAX_ORIGINS = 100;

/** A tag's text runs to the next `<` or `>`: the spans of two matches never overlap, so the scan stays linear. */
const TAG = /<(script|img|link|iframe|frame|base|source|video|audio|embed|object|track|input|form)\b([^<>]*)/gi;
/**
 * A browser strips the spaces around a quoted URL and, for http(s), reads `\` as `/`. The quote stands
 * between the two runs of spaces, so no two quantifiers compete for the same characters.
 */
const ATTRIBUTE = /\s(src|href|data|action|poster)\s*=\s*(?:["']\s*)?((?:[a-z][a-z0-9+.-]{0,20}:)?[\/\\]{2}[^"'\s>]+)/gi;
/** `srcset` and `imagesrcset` (quoted): comma-separated candidates, each a URL and a descriptor. */
const SRCSET = /\s(srcset|imagesrcset)\s*=\s*["']([^"'<>]{1,20000})/gi;
const REMOTE_URL = /^(?:[a-z][a-z0-9+.-]{0,20}:)?[\/\\]{2}/i;
const CSS_URL = /(?:url\(\s{0,10}|@import\s{1,10})["']?((?:https?:)?\/\/[^"')\s;]{1,2000})/gi;
const MODULE = /\b(?:import|from)\s{0,10}\(?\s{0,10}["'`]((?:https?:)?\/\/[^"'`\s]{1,2000})/g;
const CONNECT = /\b(fetch|WebSocket|EventSource|sendBeacon|open)\s{0,10}\(\s{0,10}(?:["'][A-Za-z]{1,10}["']\s{0,10},\s{0,10})?["'`]((?:(?:https?|wss?):)?\/\/[^"'`\s]{1,2000})/g;

/** Every remote origin the HTML names in a way that loads or reaches it, deduplicated by (origin, use). */
export function originsOf(html: string): OriginSeen[] {
  const text = html.length > MAX_SCANNED_HTML_CHARS ? html.slice(0, MAX_SCANNED_HTML_CHARS) : html;
  const seen = new Map<string, OriginSeen>();
  const add = (url: string, use: OriginUse, how: string): void => {
    const origin = originOf(url);
    if (origin === undefined || seen.size >= MAX_ORIGINS) return;
    const key = `${use} ${origin}`;
    if (!seen.has(key)) seen.set(key, { origin, use, how });
  };
  for (const t of text.matchAll(TAG)) {
    const tag = t[1]!.toLowerCase();
    const use: OriginUse = tag === "iframe" || tag === "frame" ? "frameDomains" : tag === "base" ? "baseUriDomains" : tag === "form" ? "connectDomains" : "resourceDomains";
    for (const m of t[2]!.matchAll(ATTRIBUTE)) add(m[2]!, use, `<${tag} ${m[1]!.toLowerCase()}>`);
    for (const m of t[2]!.matchAll(SRCSET)) {
      for (const candidate of m[2]!.split(",")) {
        const url = candidate.trim().split(/\s/, 1)[0]!;
        if (REMOTE_URL.test(url)) add(url, use, `<${tag} ${m[1]!.toLowerCase()}>`);
      }
    }
  }
  for (const m of text.matchAll(CSS_URL)) add(m[1]!, "resourceDomains", "CSS url()/@import");
  for (const m of text.matchAll(MODULE)) add(m[1]!, "resourceDomains", "import");
  for (const m of text.matchAll(CONNECT)) add(m[2]!, "connectDomains", `${m[1]}()`);
  return [...seen.values()];
}

/** `scheme://host[:port]` of an absolute or scheme-relative URL (scheme-relative read as https); else undefined. */
function originOf(url: string): string | undefined {
  try {
    const u = new URL(/^[\/\\]{2}/.test(url) ? `https:${url}` : url);
    if (!["http:", "https:", "ws:", "wss:"].includes(u.protocol)) return undefined;
    return u.origin;
  } catch {
    return undefined;
  }
}

/**
 * Whether a CSP source list entry (`https://api.example.com`, `https://*.example.com`, `api.example.com:8443`)
 * allows an origin. As CSP does, an `https` entry also allows `wss` and an `http` one `ws`; an entry without a
 * scheme allows the secure schemes.
 */
export function declares(entry: string, origin: string): boolean {
  const o = new URL(origin);
  const m = /^(?:([a-z][a-z0-9+.-]*):\/\/)?(\*\.)?([^/:]+)(?::(\d+|\*))?\/?$/i.exec(entry.trim());
  if (!m) return false;
  const [, scheme, wildcard, host, port] = m;
  const oScheme = o.protocol.slice(0, -1);
  const schemes = scheme === undefined ? ["https", "wss"] : [scheme.toLowerCase(), ...(scheme.toLowerCase() === "https" ? ["wss"] : scheme.toLowerCase() === "http" ? ["ws"] : [])];
  if (!schemes.includes(oScheme)) return false;
  const want = host!.toLowerCase();
  const hostOk = wildcard ? o.hostname.endsWith(`.${want}`) : o.hostname === want;
  if (!hostOk) return false;
  if (port === "*") return true;
  const defaultPort = oScheme === "https" || oScheme === "wss" ? "443" : "80";
  return (port ?? defaultPort) === (o.port || defaultPort);
}

/** A source list entry wider than a list of origins: `*`, a bare scheme (`https:`, `data:`), a host of `*`, or plain http/ws. */
export function broadEntry(entry: string): string | undefined {
  const e = entry.trim().toLowerCase();
  if (e === "*" || e === "'unsafe-inline'" || e === "'unsafe-eval'") return `${JSON.stringify(entry)} allows any origin or inline code`;
  if (/^[a-z][a-z0-9+.-]*:$/.test(e)) return `${JSON.stringify(entry)} allows every origin of the scheme`;
  if (/^(?:[a-z][a-z0-9+.-]*:\/\/)?\*(?::[\d*]+)?\/?$/.test(e)) return `${JSON.stringify(entry)} allows every host`;
  if (/^(?:http|ws):\/\//.test(e)) return `${JSON.stringify(entry)} is not encrypted`;
  return undefined;
}
