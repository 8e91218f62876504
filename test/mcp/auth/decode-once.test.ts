/**
 * A gzip'd OAuth token response read by both the MCP addon and the auth addon is decoded once: one
 * decoded-body source per exchange direction, which both subscribe to. Counted at the decompressor itself
 * (each `zlib.createGunzip` is one decoding of the body).
 */
import http from "node:http";
import zlib from "node:zlib";
import { afterEach, describe, expect, it, vi } from "vitest";
import { loopbackServers } from "../../helpers/loopback.js";
import { AddonChain } from "../../../src/proxy/addon-chain.js";
import { forwardExchange, type Upstream } from "../../../src/proxy/forward.js";
import { requestFraming } from "../../../src/proxy/framing.js";
import { mcpAddon } from "../../../src/mcp/addon.js";
import { authTrafficAddon } from "../../../src/mcp/auth/addon.js";
import type { Logger } from "../../../src/log/logger.js";
import { MessagePipeline } from "../../../src/pipeline/message-pipeline.js";

afterEach(() => {
  vi.restoreAllMocks();
});
const listen = loopbackServers();

const TOKEN = { access_token: "at-canary-0123456789", token_type: "Bearer", expires_in: 3600, scope: "mcp:tools" };

/** The production addons, in their production order, in `mode`; auth records collected. */
async function proxy(upstreamPort: number, mode: "enforce" | "monitor", records: Record<string, unknown>[]): Promise<number> {
  const pipeline = new MessagePipeline({
    policy: { enforcing: mode === "enforce", decide: () => ({ action: "allow", enforced: false, rules: [] }), judge: () => ({ action: "allow", enforced: false, rules: [] }) },
    removeDeniedTools: true,
    payloads: { payloads: "truncated", maxPayloadBytes: 1000 },
    limits: { maxPending: 10, maxSessions: 10 },
    output: { rpc: () => {}, session: () => {} },
  });
  const collect = (fields: Record<string, unknown>): number => records.push(fields);
  const log = { info: collect, warn: collect, error: collect } as unknown as Logger;
  const enforce = mode === "enforce" ? { enforce: { maxInspectBytes: 1 << 20, removeDeniedTools: true } } : {};
  const chain = new AddonChain([mcpAddon(pipeline, { maxInspectBytes: 1 << 20, ...enforce }), authTrafficAddon(log)], () => {});
  const up: Upstream = { httpAgent: new http.Agent(), httpsAgent: undefined as never, insecure: false, connectTimeoutMs: 2000 };
  return listen((req, res) => {
    const framed = requestFraming(req);
    if (!framed.ok) throw new Error(framed.reason);
    forwardExchange(chain, up, { mode: "reverse", target: { host: "127.0.0.1", port: upstreamPort }, secure: false, client: { address: "127.0.0.1", port: 0, tls: null }, path: req.url ?? "/" }, req, res, { framing: framed.framing });
  });
}

function post(port: number, path: string, form: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: "127.0.0.1", port, path, method: "POST", headers: { "content-type": "application/x-www-form-urlencoded", "accept-encoding": "gzip" } }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve(Buffer.concat(chunks)));
    });
    req.on("error", reject);
    req.end(form);
  });
}

describe("a gzip'd OAuth token response", () => {
  for (const mode of ["monitor", "enforce"] as const) {
    it(`is decoded once for every addon that reads it (${mode} mode)`, async () => {
      const body = zlib.gzipSync(JSON.stringify(TOKEN));
      const upstreamPort = await listen((req, res) => {
        req.resume();
        req.on("end", () => res.writeHead(200, { "content-type": "application/json", "content-encoding": "gzip", "content-length": String(body.length) }).end(body));
      });
      const records: Record<string, unknown>[] = [];
      const port = await proxy(upstreamPort, mode, records);
      const gunzips = vi.spyOn(zlib, "createGunzip");
      // A client that does not decode the body itself (fetch would: another gunzip).
      const raw = await post(port, "/token", "grant_type=client_credentials&client_id=c1");
      for (let i = 0; i < 100 && records.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
      expect(records).toHaveLength(1);
      // What the auth addon read is the decoded body: the token response's shape, never the token.
      expect(records[0]).toMatchObject({ event: "auth", step: "token", status: 200 });
      expect(JSON.stringify(records[0])).toContain("mcp:tools");
      expect(JSON.stringify(records[0])).not.toContain(TOKEN.access_token);
      expect(records[0]).not.toHaveProperty("bodyProblems");
      expect(gunzips).toHaveBeenCalledTimes(1);
      expect(JSON.parse(zlib.gunzipSync(raw).toString())).toEqual(TOKEN);
    });
  }
});
