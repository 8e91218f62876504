import { createHash, timingSafeEqual } from "node:crypto";
import { UsageError } from "../util/usage-error.js";
import { headerValue } from "./headers.js";

export class ProxyAuthError extends UsageError {}

/**
 * HTTP Basic proxy authentication. Credentials are compared as SHA-256 digests with timingSafeEqual, so
 * neither their content nor their length leaks through timing.
 */
export class ProxyAuth {
  private readonly expected: Buffer;

  private constructor(credentials: string) {
    this.expected = digest(credentials);
  }

  /** `user:pass`, as given to --proxy-auth or MCP_WIRETAP_PROXY_AUTH. */
  static parse(value: string): ProxyAuth {
    const colon = value.indexOf(":");
    if (colon < 1 || colon === value.length - 1) throw new ProxyAuthError("--proxy-auth must be user:password (both non-empty)");
    return new ProxyAuth(value);
  }

  /** Checks a Proxy-Authorization header value. */
  allows(header: string | string[] | undefined): boolean {
    const match = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(headerValue(header) ?? "");
    const given = digest(match ? Buffer.from(match[1]!, "base64").toString("utf8") : "");
    return timingSafeEqual(given, this.expected) && match !== null;
  }
}

function digest(text: string): Buffer {
  return createHash("sha256").update(text).digest();
}

export const PROXY_AUTH_CHALLENGE = { "proxy-authenticate": 'Basic realm="mcp-wiretap"' };
export const PROXY_AUTH_BODY = "mcp-wiretap: proxy authentication required\n";

export function proxyAuthRequiredResponse(): string {
  return (
    `HTTP/1.1 407 Proxy Authentication Required\r\nproxy-authenticate: ${PROXY_AUTH_CHALLENGE["proxy-authenticate"]}\r\n` +
    `content-type: text/plain; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(PROXY_AUTH_BODY)}\r\nconnection: close\r\n\r\n${PROXY_AUTH_BODY}`
  );
}
