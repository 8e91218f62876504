import type { Logger } from "../../log/logger.js";
import { decodedBody } from "../../proxy/decoded-body.js";
import type { Addon, Exchange } from "../../proxy/exchange.js";
import { bodyCredentials } from "./body-credentials.js";
import { capture, type Capture } from "./capture.js";
import { challengeOf, discoveryDocument, mayCarryOAuthBody } from "./classify.js";
import { AuthFlow } from "./flow.js";
import { authRecord } from "./record.js";

/**
 * OAuth traffic around MCP servers (authorization spec 2025-06-18 on) as `event: "auth"` records: the
 * 401/403 challenge, metadata discovery, dynamic client registration and token requests. One record per
 * auth-related exchange, written when it ends. Records say what was asked and answered, never a token or
 * secret: credentials appear only as booleans ("a client_secret was sent"), and every string taken from
 * the wire goes through the redaction functions. The contract is in docs/log-format.md.
 */

export interface AuthTrafficOptions {
  /** Largest (decoded) body inspected, each way; a larger one is recorded as `truncated: true`. */
  maxBodyBytes?: number;
  /** Told the credentials each body carried, removed by value from every record of the exchange. */
  secrets?: { willLearn(flow: string, values: Promise<Iterable<string>>): void };
}

export const DEFAULT_AUTH_MAX_BODY_BYTES = 64 * 1024;

const NOTE = "auth";
/** Longest wait at shutdown for records whose bodies are still being decoded. */
const CLOSE_GRACE_MS = 1_000;

/** The `auth` addon: register it with the others in `startProxy`. */
export function authTrafficAddon(log: Logger, opts: AuthTrafficOptions = {}): Addon {
  const limit = opts.maxBodyBytes ?? DEFAULT_AUTH_MAX_BODY_BYTES;
  const learn = (ex: Exchange, body: Capture, headers: Exchange["request"]["headers"]): Capture => {
    opts.secrets?.willLearn(ex.id, body.done.then(() => bodyCredentials(body.result(), headers)));
    return body;
  };
  const pending = new Set<Promise<void>>();
  const existing = (ex: Exchange) => ex.notes.get(NOTE) as AuthFlow | undefined;
  const flowOf = (ex: Exchange): AuthFlow => {
    let flow = existing(ex);
    if (!flow) {
      flow = new AuthFlow(ex);
      ex.notes.set(NOTE, flow);
    }
    return flow;
  };

  return {
    name: "auth",
    requestHeaders(ex) {
      const { method, headers } = ex.request;
      const document = method === "GET" ? discoveryDocument(ex.request.path) : undefined;
      if (document) flowOf(ex).document = document;
      if (method === "POST" && mayCarryOAuthBody(headers)) {
        const flow = flowOf(ex);
        flow.request = learn(ex, capture(decodedBody(ex, "request"), limit), headers);
      }
    },

    responseHeaders(ex) {
      const response = ex.response;
      if (!response) return;
      const challenge = challengeOf(response.status, response.headers);
      if (challenge) flowOf(ex).challenge = challenge;
      const flow = existing(ex);
      if (flow && (flow.document || flow.request)) {
        flow.response = learn(ex, capture(decodedBody(ex, "response"), limit), response.headers);
      }
    },

    exchangeEnd(ex) {
      const flow = existing(ex);
      if (!flow) return;
      const decoding = [flow.request?.done, flow.response?.done].filter((p): p is Promise<void> => p !== undefined);
      const written = Promise.allSettled(decoding).then(() => {
        try {
          const record = authRecord(flow);
          if (record) log[record.level](record.fields);
        } catch (err) {
          // Never let a record-building bug escape; say which, without any of the data.
          log.error({ event: "addon_error", addon: "auth", hook: "exchangeEnd", err: err instanceof Error ? err.name : "error" });
        }
      });
      pending.add(written);
      void written.finally(() => pending.delete(written));
    },

    /** At shutdown: records still being built (bodies still decoding) are written before `stop`. */
    async close() {
      // Bounded: a body that never ends must not hold up the shutdown.
      const grace = new Promise<void>((resolve) => setTimeout(resolve, CLOSE_GRACE_MS).unref());
      await Promise.race([Promise.allSettled([...pending]), grace]);
    },
  };
}
