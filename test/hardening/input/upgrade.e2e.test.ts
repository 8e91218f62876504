/**
 * `Upgrade` requests, attacked with raw bytes through the in-process proxy in both policy modes, against
 * recording upstreams that (like most MCP servers) ignore `Upgrade` unless a test makes them switch. A raw
 * pipe may only start after the upstream answered 101: before that, no byte the client sent after its
 * request head reaches the upstream, and an answer other than 101 is an ordinary exchange (recorded,
 * decoded, judged, enforced). An Upgrade request with a body is refused: node's server hands such a body
 * over as the first bytes of the new protocol, unjudged.
 */
import tls from "node:tls";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseAsUpstream } from "../../helpers/differential-check.js";
import { callBody, DENIED_TOOL, differentialFindings, sendRaw, startRig, type PolicyMode, type Rig, type Route } from "../../helpers/differential-rig.js";
import { LEAKED_KEY } from "../../helpers/differential-upstream.js";
import { openTunnel, parseRawResponse, tlsThroughTunnel, type LogRecord } from "../../helpers/proxy-harness.js";

const WS_HEAD = "Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n";
const MCP = "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMcp-Protocol-Version: 2025-06-18\r\n";

function deniedPost(path: string, u: string, extra = ""): string {
  const body = callBody(31, DENIED_TOOL);
  return `POST ${path} HTTP/1.1\r\nHost: ${u}\r\n${MCP}${extra}Content-Length: ${body.length}\r\n\r\n${body}`;
}

describe("Upgrade: a raw pipe only after a 101", () => {
  let rig: Rig;
  let n = 0;
  const nextPath = (): string => `/mcp?case=${String(++n).padStart(4, "0")}`;

  beforeAll(async () => {
    rig = await startRig();
  });
  afterAll(async () => {
    await rig?.close();
  });

  const onPath = async (mode: PolicyMode, route: Route, path: string) =>
    (await parseAsUpstream(rig.sides[mode].upstream[route].connections)).filter((r) => r.url === path || r.url.startsWith(`${path}-`));
  const recordsOn = async (mode: PolicyMode, path: string, event: string): Promise<LogRecord[]> =>
    (await rig.sides[mode].proxy.records()).filter((r) => r.event === event && r.path === path);

  for (const mode of ["monitor", "enforce"] as PolicyMode[]) {
    for (const route of ["tunnel", "absolute"] as Route[]) {
      describe(`${mode} mode, ${route === "tunnel" ? "inside a CONNECT tunnel" : "as absolute-URI requests"}`, () => {
        it("a POST with Upgrade and a denied call in its body is refused (400), on the record, nothing forwarded", async () => {
          const side = rig.sides[mode];
          const path = nextPath();
          const answer = parseRawResponse(await sendRaw(side, route, [deniedPost(path, side.upstream[route].authority, WS_HEAD)]));
          expect(answer.status).toBe(400);
          expect(answer.body.toString()).toContain("an Upgrade request must not carry a body");
          expect(await onPath(mode, route, path)).toEqual([]);
          const refused = (await side.proxy.records()).filter((r) => r.event === "refused" && r.reason === "an Upgrade request must not carry a body");
          expect(refused.length).toBeGreaterThan(0);
          expect(await differentialFindings(side, route, path)).toEqual([]);
        });

        it("an upstream that does not switch (200 event stream): an ordinary exchange, judged; the connection then closes", async () => {
          const side = rig.sides[mode];
          const up = side.upstream[route];
          const path = nextPath();
          const raw = await sendRaw(side, route, [`GET ${path} HTTP/1.1\r\nHost: ${up.authority}\r\nAccept: text/event-stream\r\n${WS_HEAD}\r\n`]);
          const answer = parseRawResponse(raw);
          expect(answer.status).toBe(200);
          expect(answer.headers["content-type"]).toBe("text/event-stream");
          expect(answer.headers.connection).toBe("close");
          const http = await side.proxy.waitForRecord((r) => r.event === "http" && r.path === path);
          expect(http).toMatchObject({ method: "GET", status: 200, statusSource: "upstream" });
          const leak = await side.proxy.waitForRecord((r) => r.event === "rpc" && r.path === path && r.method === "notifications/message");
          expect(leak.decision).toMatchObject({ action: "deny", enforced: mode === "enforce" });
          if (mode === "enforce") expect(raw.toString("latin1")).not.toContain(LEAKED_KEY);
          else expect(raw.toString("latin1")).toContain(LEAKED_KEY);
          expect(await recordsOn(mode, path, "websocket")).toEqual([]);
          expect(await differentialFindings(side, route, path)).toEqual([]);
        });

        it("bytes sent after the Upgrade head (a second request) never reach an upstream that did not switch", async () => {
          const side = rig.sides[mode];
          const up = side.upstream[route];
          const path = nextPath();
          const head = `GET ${path} HTTP/1.1\r\nHost: ${up.authority}\r\nAccept: text/event-stream\r\n${WS_HEAD}\r\n`;
          const answer = parseRawResponse(await sendRaw(side, route, [head + deniedPost(`${path}-inner`, up.authority, "Connection: close\r\n")]));
          expect(answer.status).toBe(200);
          expect((await onPath(mode, route, path)).map((r) => r.url)).toEqual([path]);
          expect(await differentialFindings(side, route, path)).toEqual([]);
        });
      });
    }
  }

  it("an upgrade to anything but WebSocket (h2c) is not offered upstream: an ordinary exchange, even with a server that would switch", async () => {
    const side = rig.sides.monitor;
    const up = side.upstream.tunnel;
    up.switchProtocols = true;
    try {
      const path = nextPath();
      const raw = await sendRaw(side, "tunnel", [`GET ${path} HTTP/1.1\r\nHost: ${up.authority}\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n\r\n`]);
      expect(parseRawResponse(raw).status).toBe(200);
      const reached = await onPath("monitor", "tunnel", path);
      expect(reached).toHaveLength(1);
      expect(reached[0]!.headers.upgrade).toBeUndefined();
      expect(await recordsOn("monitor", path, "websocket")).toEqual([]);
      expect(await differentialFindings(side, "tunnel", path)).toEqual([]);
    } finally {
      up.switchProtocols = false;
    }
  });

  it("an upstream that answers 101: the pipe starts, bytes flow both ways, records say so", async () => {
    const side = rig.sides.enforce;
    const up = side.upstream.tunnel;
    up.switchProtocols = true;
    try {
      const path = nextPath();
      const { socket } = await openTunnel(side.proxy, up.authority);
      const secure: tls.TLSSocket = await tlsThroughTunnel(socket, "127.0.0.1", side.proxy.caPem);
      let received = "";
      secure.on("data", (c: Buffer) => (received += c.toString("latin1")));
      const until = async (what: string): Promise<void> => {
        for (let waited = 0; !received.includes(what); waited += 10) {
          if (waited > 5_000) throw new Error(`no ${JSON.stringify(what)} in ${JSON.stringify(received)}`);
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
      };
      secure.write(`GET ${path} HTTP/1.1\r\nHost: ${up.authority}\r\n${WS_HEAD}\r\n`);
      await until("\r\n\r\n");
      expect(received).toMatch(/^HTTP\/1\.1 101 /);
      secure.write("frame-bytes-after-the-switch");
      await until("frame-bytes-after-the-switch");
      secure.destroy();
      const ws = await side.proxy.waitForRecord((r) => r.event === "websocket" && r.path === path);
      expect(ws).toMatchObject({ status: 101 });
      expect(ws.bytesUp).toBe("frame-bytes-after-the-switch".length);
      expect(await recordsOn("enforce", path, "http")).toMatchObject([{ status: 101, method: "GET" }]);
      expect(await differentialFindings(side, "tunnel", path)).toEqual([]);
    } finally {
      up.switchProtocols = false;
    }
  });
});
