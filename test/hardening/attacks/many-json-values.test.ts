/**
 * A JSON message with a huge number of members (issue 33): 600,000 keys in 7 MB took the event loop for
 * seconds in one piece (its parse, its depth check, its arguments' digest, its record). Past MAX_JSON_VALUES
 * values (member names included), counted on the text before it is parsed, it is not inspected: monitor mode forwards
 * it and records why, enforce mode refuses it with a policy error and records that, as for a body over
 * `--max-inspect-bytes`. A long text with as many commas inside one string is still read.
 *
 * The upstream is plain HTTP and does not parse what it gets: the test's thread is the proxy's.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_JSON_VALUES } from "../../../src/body/limits.js";
import { longestStep } from "../../helpers/longest-step.js";
import { startTestProxy, type LogRecord, type TestProxy } from "../../helpers/proxy-harness.js";
import { tempDir, writePolicyFile } from "../../policy/policy-fixtures.js";

const KEYS = 600_000;
const manyKeys = (id: number): Buffer => {
  const members: string[] = [];
  for (let i = 0; i < KEYS; i++) members.push(`"k${i}":1`);
  return Buffer.from(`{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"delete_everything","arguments":{${members.join(",")}}}}`);
};
const RULES = "rules:\n  - name: no-delete\n    action: deny\n    match: { tool: delete_everything }\n";

describe(`a message with ${KEYS} members`, () => {
  let upstream: http.Server;
  let upstreamHost: string;
  const received: number[] = [];
  const proxies: Record<"monitor" | "enforce", TestProxy> = {} as Record<"monitor" | "enforce", TestProxy>;
  const tmp = tempDir();

  beforeAll(async () => {
    upstream = http.createServer((req, res) => {
      let bytes = 0;
      req.on("data", (c: Buffer) => (bytes += c.length));
      req.on("end", () => {
        received.push(bytes);
        res.writeHead(200, { "content-type": "application/json" });
        // On /answer-many, an answer one value past the bound (a member is a colon and a comma).
        const many = req.url?.endsWith("/answer-many") ? `,"x":{${Array.from({ length: MAX_JSON_VALUES / 2 }, (_, i) => `"k${i}":1`).join(",")}}` : "";
        res.end(`{"jsonrpc":"2.0","id":1,"result":{"content":[]${many}}}`);
      });
    });
    await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
    upstreamHost = `127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    for (const mode of ["monitor", "enforce"] as const) proxies[mode] = await startTestProxy({ config: writePolicyFile(tmp.dir, `mode: ${mode}\n${RULES}`, `${mode}.yaml`) });
  });
  afterAll(async () => {
    for (const proxy of Object.values(proxies)) await proxy.stop();
    await new Promise<void>((resolve) => upstream?.close(() => resolve()));
    tmp.cleanup();
  });

  const post = (proxy: TestProxy, body: Buffer, target = "/mcp"): Promise<{ status: number; text: string }> =>
    new Promise((resolve, reject) => {
      const req = http.request(
        { host: "127.0.0.1", port: proxy.port, method: "POST", path: `http://${upstreamHost}${target}`, agent: false, headers: { "content-type": "application/json", accept: "application/json, text/event-stream" } },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("end", () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString() }));
        },
      );
      req.on("error", reject);
      req.end(body);
    });
  const invalidRequest = (r: LogRecord): boolean => r.event === "rpc" && r.direction === "client_to_server" && r.kind === "invalid";
  const REASON = expect.stringContaining(`json_too_many_values: JSON holds more than ${MAX_JSON_VALUES} values (member names included)`);

  it("monitor mode: forwarded as sent, recorded as not inspected, in short steps", async () => {
    const body = manyKeys(1);
    const before = received.length;
    const worst = await longestStep(async () => {
      expect((await post(proxies.monitor, body)).status).toBe(200);
      await proxies.monitor.waitForRecord(invalidRequest, { timeoutMs: 30_000 });
    });
    expect(received.slice(before)).toEqual([body.length]);
    expect(await proxies.monitor.waitForRecord(invalidRequest)).toMatchObject({ reason: REASON });
    // Before: some 5,000 ms in one step.
    expect(worst).toBeLessThan(250);
  }, 60_000);

  it("enforce mode: refused with a policy error and recorded, in short steps", async () => {
    const before = received.length;
    let answer = { status: 0, text: "" };
    const worst = await longestStep(async () => {
      answer = await post(proxies.enforce, manyKeys(2));
      await proxies.enforce.waitForRecord(invalidRequest, { timeoutMs: 30_000 });
    });
    expect(received.length).toBe(before);
    expect(JSON.parse(answer.text)).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32052, message: expect.stringContaining("json_too_many_values") } });
    expect(await proxies.enforce.waitForRecord(invalidRequest)).toMatchObject({ reason: REASON, decision: { action: "deny", enforced: true } });
    expect(worst).toBeLessThan(250);
  }, 60_000);

  it("still reads a message whose string holds as many commas and colons", async () => {
    const text = "a,b:".repeat(KEYS / 2);
    await post(proxies.monitor, Buffer.from(JSON.stringify({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "echo", arguments: { text } } })));
    expect(await proxies.monitor.waitForRecord((r) => r.event === "rpc" && r.direction === "client_to_server" && r.id === 3, { timeoutMs: 30_000 })).toMatchObject({ kind: "request", tool: "echo" });
  }, 60_000);

  it("enforce mode: an answer past the bound does not reach the client; it is told why, and the record says so", async () => {
    const call = Buffer.from(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "echo", arguments: {} } }));
    const answer = await post(proxies.enforce, call, "/answer-many");
    expect(answer.text).not.toContain('"k0"');
    expect(JSON.parse(answer.text)).toMatchObject({ jsonrpc: "2.0", error: { message: expect.stringContaining("json_too_many_values") } });
    const invalidAnswer = (r: LogRecord): boolean => r.event === "rpc" && r.direction === "server_to_client" && r.kind === "invalid" && r.path === "/answer-many";
    expect(await proxies.enforce.waitForRecord(invalidAnswer, { timeoutMs: 10_000 })).toMatchObject({ reason: REASON, decision: { action: "deny", enforced: true } });
  }, 30_000);
});
