import { randomBytes, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";

/**
 * Who may talk to the UI server. It shows decrypted traffic, so every request must carry the token
 * printed in the banner (in the URL once; the page load turns it into an HttpOnly, SameSite=Strict
 * cookie), name this server in `Host` (a DNS-rebinding page names its own host), and, when it says where
 * it comes from (`Origin`, `Sec-Fetch-Site`), come from this server's own pages.
 */
export class UiGuard {
  readonly token = randomBytes(24).toString("base64url");
  private readonly hosts: Set<string>;
  private readonly origins: Set<string>;
  readonly cookieName: string;

  constructor(readonly port: number) {
    const names = ["127.0.0.1", "localhost"];
    this.hosts = new Set(names.map((n) => `${n}:${port}`));
    this.origins = new Set(names.map((n) => `http://${n}:${port}`));
    // Cookies are shared by every port of a host: the name carries the port.
    this.cookieName = `mcp_wiretap_ui_${port}`;
  }

  /** 403 reasons first (wrong Host, foreign Origin), then 401 (no valid token). Null: allowed. */
  check(req: IncomingMessage, url: URL): { status: 401 | 403; reason: string } | null {
    const foreign = this.foreignRequest(req);
    if (foreign !== null) return { status: 403, reason: foreign };
    if (this.matches(url.searchParams.get("token")) || this.matches(this.cookieOf(req))) return null;
    return { status: 401, reason: "the token from the banner is required (open the URL it printed)" };
  }

  /** Why a request is not from this server's own origin (a rebinding Host, a foreign Origin), or null. */
  foreignRequest(req: IncomingMessage): string | null {
    const host = (req.headers.host ?? "").toLowerCase();
    if (!this.hosts.has(host)) return "Host is not this server (DNS rebinding?)";
    const origin = req.headers.origin;
    if (origin !== undefined && !this.origins.has(origin.toLowerCase())) return "foreign Origin";
    // Only this origin's page, or the person (a link from the banner, the address bar: "none"). A page on
    // another port of this host is the same *site*: the browser sends it the cookie (cookies ignore ports).
    const site = req.headers["sec-fetch-site"];
    if (site !== undefined && site !== "same-origin" && site !== "none") return `${site} request`;
    return null;
  }

  /** `Authorization: Bearer <token>` names this server's token (the MCP endpoint's way of presenting it). */
  bearerMatches(req: IncomingMessage): boolean {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? "");
    return m !== null && this.matches(m[1]!);
  }

  /** The request presented the token in its URL (the first page load): answer it with the cookie. */
  presentedInUrl(url: URL): boolean {
    return this.matches(url.searchParams.get("token"));
  }

  setCookieHeader(): string {
    return `${this.cookieName}=${this.token}; HttpOnly; SameSite=Strict; Path=/`;
  }

  url(): string {
    return `http://127.0.0.1:${this.port}/?token=${this.token}`;
  }

  private cookieOf(req: IncomingMessage): string | null {
    const header = req.headers.cookie;
    if (!header) return null;
    for (const part of header.split(";")) {
      const eq = part.indexOf("=");
      if (eq > 0 && part.slice(0, eq).trim() === this.cookieName) return part.slice(eq + 1).trim();
    }
    return null;
  }

  private matches(candidate: string | null): boolean {
    if (candidate === null) return false;
    const a = Buffer.from(candidate);
    const b = Buffer.from(this.token);
    return a.length === b.length && timingSafeEqual(a, b);
  }
}
