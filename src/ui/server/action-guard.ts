import { randomBytes, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";

/** Pages served whose nonce is still honoured (a person opens a few tabs; an old tab reloads for a new one). */
const MAX_PAGES = 64;

/**
 * What a state-changing request (release a held message) must carry beyond what every request does (UiGuard:
 * Host, token, a same-origin Origin when one is sent): it is a POST of JSON, it says it comes from this server's
 * page (Origin, never absent), and it carries the token and the nonce of a page this server served, in headers
 * that no form and no simple cross-origin request can set.
 */
export class ActionGuard {
  private readonly nonces: string[] = [];

  constructor(private readonly token: string) {}

  /** A nonce for one served page. */
  issue(): string {
    const nonce = randomBytes(18).toString("base64url");
    this.nonces.push(nonce);
    if (this.nonces.length > MAX_PAGES) this.nonces.shift();
    return nonce;
  }

  /** Null: allowed. Call after UiGuard.check (which refuses a foreign Origin, a rebinding Host, no token). */
  check(req: IncomingMessage): { status: 403 | 405 | 415; reason: string } | null {
    if (req.method !== "POST") return { status: 405, reason: "actions are POST requests" };
    if (req.headers.origin === undefined) return { status: 403, reason: "an action needs the Origin of this server's page" };
    const site = req.headers["sec-fetch-site"];
    if (site !== undefined && site !== "same-origin") return { status: 403, reason: "an action must come from this server's page" };
    if (!/^application\/json\s*(;|$)/i.test(req.headers["content-type"] ?? "")) return { status: 415, reason: "an action is a JSON body" };
    if (!same(header(req, "x-wiretap-token"), this.token)) return { status: 403, reason: "an action needs the token in X-Wiretap-Token" };
    const nonce = header(req, "x-wiretap-nonce");
    if (nonce === undefined || !this.nonces.some((n) => same(nonce, n))) return { status: 403, reason: "an action needs the nonce of a page this server served (reload the page)" };
    return null;
  }
}

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return typeof v === "string" ? v : undefined;
}

function same(a: string | undefined, b: string): boolean {
  if (a === undefined) return false;
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
