/**
 * The differential harness, stdio side: generated lines, each a carrier message with another one hidden the
 * ways receivers disagree on (a separator only some readers end a line at, a NUL, a second value, NaN, an id
 * past 2^53, a name cut by a bad byte, a line break inside a string, a BOM, CRLF, a scalar before it, a BOM
 * after a break), written by a client and by
 * a hostile server through `mcp-wiretap stdio` in both policy modes. The bytes each peer received are read by
 * every reference reader (test/helpers/differential-stdio.ts: the TypeScript SDK's ReadBuffer, the Python SDK,
 * Java/.NET readLine, str.splitlines(), a C-string reader, a stream decoder, readLine with a BOM-skipping parser); every message any of them reads must have a record
 * with its method, tool and id, and in enforce mode none may have been denied.
 */
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { stdioFindings } from "../../helpers/differential-stdio.js";
import { NODE_BIN, REPO_ROOT } from "../../helpers/proxy-harness.js";
import { records, tempDir } from "../../helpers/stdio-shim.js";
import { throughShim } from "../../helpers/stdio-raw.js";

const DENIED_TOOL = "delete_everything";
const DENIED_METHOD = "sampling/createMessage";
const TEE_SERVER = path.join(REPO_ROOT, "test", "helpers", "stdio-tee-server.mjs");
const SEPARATORS = ["\r", "\r\n", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029", "\0", " "] as const;
const TECHNIQUES = ["plain", "in a value", "after the carrier", "before the carrier", "NaN", "id past 2^53", "name cut by a bad byte", "break inside a string", "BOM", "CRLF", "after a scalar", "BOM after a break"] as const;

interface Case {
  from: "client" | "server";
  technique: (typeof TECHNIQUES)[number];
  separator: (typeof SEPARATORS)[number];
  hiddenDenied: boolean;
}

const cases: fc.Arbitrary<Case> = fc.record({
  from: fc.constantFrom<Case["from"]>("client", "server"),
  technique: fc.constantFrom(...TECHNIQUES),
  separator: fc.constantFrom(...SEPARATORS),
  hiddenDenied: fc.boolean(),
});

const json = (v: unknown): string => JSON.stringify(v);

/** The line one case writes; `n` makes its ids its own. The client's carrier is a call, the server's an answer to it. */
function lineOf(c: Case, n: number): Buffer {
  const id = 1000 + n * 10;
  const clientCall = (i: number | string, tool: string, args: Record<string, unknown> = {}): string => json({ jsonrpc: "2.0", id: i, method: "tools/call", params: { name: tool, arguments: args } });
  const serverAsk = (i: string, method: string): string => json({ jsonrpc: "2.0", id: i, method, params: method === DENIED_METHOD ? { messages: [], maxTokens: 5 } : {} });
  const hidden = c.from === "client" ? clientCall(id + 1, c.hiddenDenied ? DENIED_TOOL : "echo") : serverAsk(`s${id + 1}`, c.hiddenDenied ? DENIED_METHOD : "roots/list");
  const carrier = (inner: string): string =>
    c.from === "client"
      ? `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"echo","arguments":{"x":${inner}}}}`
      : `{"jsonrpc":"2.0","id":${id},"result":{"content":[],"x":${inner}}}`;
  const sep = c.separator;
  switch (c.technique) {
    case "plain":
      return Buffer.from(`${carrier("1")}\n`);
    case "in a value":
      return Buffer.from(`${carrier(`${sep}${hidden}${sep}`)}\n`);
    case "after the carrier":
      return Buffer.from(`${carrier("1")}${sep}${hidden}\n`);
    case "before the carrier":
      return Buffer.from(`${hidden}${sep}${carrier("1")}\n`);
    case "NaN":
      return Buffer.from(`${hidden.replace(/\{\}\}\}$|"params":\{/, (m) => (m.startsWith("{") ? '{"n":NaN}}}' : '"params":{"n":Infinity,'))}\n`);
    case "id past 2^53":
      return Buffer.from(`${hidden.replace(/"id":("?)s?\d+\1/, '"id":9007199254740993')}\n`);
    case "name cut by a bad byte": {
      const name = c.from === "client" ? (c.hiddenDenied ? DENIED_TOOL : "echo") : c.hiddenDenied ? DENIED_METHOD : "roots/list";
      const at = hidden.indexOf(name) + 3;
      return Buffer.concat([Buffer.from(hidden.slice(0, at)), Buffer.from([0xff]), Buffer.from(`${hidden.slice(at)}\n`)]);
    }
    case "break inside a string":
      return Buffer.from(`${carrier(json(`a${sep}b`))}\n`);
    case "BOM":
      return Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(`${hidden}\n`)]);
    case "CRLF":
      return Buffer.from(`${carrier("1")}\r\n${hidden}\r\n`);
    case "after a scalar":
      return Buffer.from(`1${sep}${hidden}\n`);
    case "BOM after a break":
      return Buffer.from(`${carrier("1")}${sep}\ufeff${hidden}\n`);
  }
}

const dir = tempDir("mcp-wiretap-differential-stdio-");
let launch = 0;

async function runCases(all: Case[], mode: "enforce" | "monitor"): Promise<{ findings: string[]; reachedServer: number }> {
  const n = ++launch;
  const policy = path.join(dir, `${mode}.yaml`);
  writeFileSync(policy, `mode: ${mode}\nrules:\n  - { name: no-delete, action: deny, match: { tool: ${DENIED_TOOL} } }\n  - { name: no-sampling, action: deny, match: { method: ${DENIED_METHOD} } }\n`);
  const fromClient = Buffer.concat(all.map((c, i) => (c.from === "client" ? lineOf(c, i) : Buffer.from(`${json({ jsonrpc: "2.0", id: 1000 + i * 10, method: "tools/call", params: { name: "echo", arguments: {} } })}\n`))));
  const fromServer = Buffer.concat(all.map((c, i) => (c.from === "server" ? lineOf(c, i) : Buffer.alloc(0))));
  const received = path.join(dir, `${n}.received`);
  const send = path.join(dir, `${n}.send`);
  const logFile = path.join(dir, `${n}.ndjson`);
  writeFileSync(received, "");
  writeFileSync(send, fromServer);
  const run = await throughShim(["--log-file", logFile, "--ca-dir", dir, "--config", policy], [NODE_BIN, TEE_SERVER], fromClient, { RECEIVED: received, SEND: send });
  expect(run.code, run.stderr).toBe(0);
  const recs = await records(logFile);
  const check = { enforce: mode === "enforce", deniedTools: [DENIED_TOOL], deniedMethods: [DENIED_METHOD] };
  const toServer = readFileSync(received);
  const findings = [
    ...stdioFindings(toServer, recs, { ...check, direction: "client_to_server" }),
    ...stdioFindings(run.toClient, recs, { ...check, direction: "server_to_client" }),
  ];
  return { findings, reachedServer: toServer.toString().split("\n").filter(Boolean).length };
}

describe("differential: generated stdio lines through mcp-wiretap stdio to every family of reader", () => {
  it("every message any reader reads was recorded with its method, tool and id; in enforce mode none was denied", async () => {
    let reached = 0;
    let sent = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(cases, { minLength: 8, maxLength: 14 }), async (all) => {
        for (const mode of ["monitor", "enforce"] as const) {
          const { findings, reachedServer } = await runCases(all, mode);
          sent += all.length;
          reached += reachedServer;
          expect(findings, `${mode} mode, cases ${JSON.stringify(all)}`).toEqual([]);
        }
      }),
      {
        numRuns: Number(process.env.DIFFERENTIAL_STDIO_RUNS ?? 3),
        interruptAfterTimeLimit: 60_000,
        markInterruptAsFailure: false,
        ...(process.env.DIFFERENTIAL_SEED ? { seed: Number(process.env.DIFFERENTIAL_SEED), path: process.env.DIFFERENTIAL_PATH } : {}),
      },
    );
    // The harness is live: lines did reach the server (monitor mode forwards all, enforce mode the clean ones).
    expect(reached).toBeGreaterThan(sent / 4);
    console.info(`differential stdio: ${sent} lines sent, ${reached} reached the server`);
  }, 120_000);
});

describe("differential: a stdio line whose values between CRs together hold more than the JSON value bound", () => {
  it("enforce mode: no reader of the server's input reads any of them, the client is told why, the next line still passes", async () => {
    const policy = path.join(dir, "enforce-values.yaml");
    writeFileSync(policy, `mode: enforce\nrules:\n  - { name: no-delete, action: deny, match: { tool: ${DENIED_TOOL} } }\n`);
    // Each value well under the bound (60,000 members), the three together over it; readers that end a line at CR read three calls.
    const members = Array.from({ length: 60_000 }, (_, i) => `"k${i}":1`).join(",");
    const call = (id: number, tool: string): string => `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"${tool}","arguments":{${members}}}}`;
    const fromClient = Buffer.from(`${[call(1, "echo"), call(2, DENIED_TOOL), call(3, "echo")].join("\r")}\n${json({ jsonrpc: "2.0", id: 4, method: "tools/call", params: { name: "echo", arguments: {} } })}\n`);
    const received = path.join(dir, "values.received");
    const send = path.join(dir, "values.send");
    const logFile = path.join(dir, "values.ndjson");
    writeFileSync(received, "");
    writeFileSync(send, "");
    const run = await throughShim(["--log-file", logFile, "--ca-dir", dir, "--config", policy], [NODE_BIN, TEE_SERVER], fromClient, { RECEIVED: received, SEND: send });
    expect(run.code, run.stderr).toBe(0);
    const recs = await records(logFile);
    const toServer = readFileSync(received);
    const check = { enforce: true, deniedTools: [DENIED_TOOL], deniedMethods: [] };
    expect(stdioFindings(toServer, recs, { ...check, direction: "client_to_server" })).toEqual([]);
    // Only the last line reached the server, as it was sent.
    expect(toServer.toString()).toBe(`${json({ jsonrpc: "2.0", id: 4, method: "tools/call", params: { name: "echo", arguments: {} } })}\n`);
    const unread = recs.filter((r) => r.event === "rpc" && r.direction === "client_to_server" && r.kind === "invalid");
    expect(unread).toHaveLength(1);
    expect(unread[0]!.decision).toMatchObject({ action: "deny", enforced: true });
    expect(String(unread[0]!.reason)).toMatch(/more than 200000 JSON values/);
    expect(run.toClient.toString()).toMatch(/-3205\d.*more than 200000 JSON values/);
  }, 30_000);
});
