/**
 * The rest of the stdio line-end class, in both directions and both modes: line breaks only some readers
 * honour (VT, FF, FS, GS, RS, NEL, U+2028, U+2029 for str.splitlines() and Java's Scanner), a NUL that ends
 * a C string, NaN that Python's json reads, ids past 2^53 that a JavaScript reader rounds, a tool name cut
 * by a bad byte that a dropping decoder joins, and answers to no request. Enforce mode lets no reader read
 * a message that was not judged; monitor mode records every message some reader reads.
 */
import { describe, expect, it } from "vitest";
import { launchTap, type TapMode as Mode, type TapRecord as Rec } from "../../helpers/stdio-tap-launch.js";

const launch = (mode: Mode) => launchTap(mode);

const call = (id: unknown, name: string, args = "{}"): string => `{"jsonrpc":"2.0","id":${String(id)},"method":"tools/call","params":{"name":"${name}","arguments":${args}}}`;
const ALLOWED = call(1, "echo");
const DENIED = call(2, "delete_everything");
const answers = (text: string): { id: unknown; error?: { code: number } }[] => text.split("\n").filter(Boolean).map((l) => JSON.parse(l) as { id: unknown; error?: { code: number } });
const deleteCall = (records: Rec[]): Rec | undefined => records.find((r) => r.kind === "request" && r.tool === "delete_everything");

describe("stdio: line breaks some readers honour, client to server", () => {
  for (const [name, sep] of [["CR", "\r"], ["VT", "\x0b"], ["FF", "\x0c"], ["FS", "\x1c"], ["GS", "\x1d"], ["RS", "\x1e"], ["NEL", "\x85"], ["U+2028", "\u2028"], ["U+2029", "\u2029"]] as const) {
    it(`${name} between an allowed and a denied call: enforce refuses the line, monitor records the denied call`, () => {
      const line = Buffer.from(`${ALLOWED}${sep}${DENIED}\n`);
      const enforce = launch("enforce");
      enforce.tap.fromClient(line);
      expect(enforce.server()).toBe("");
      expect(answers(enforce.client()).map((a) => [a.id, a.error?.code])).toEqual(expect.arrayContaining([[1, -32052], [2, -32052]]));
      expect(deleteCall(enforce.records)?.decision).toMatchObject({ action: "deny", enforced: true });
      const monitor = launch("monitor");
      monitor.tap.fromClient(line);
      expect(monitor.server()).toBe(line.toString());
      expect(deleteCall(monitor.records)).toMatchObject({ id: 2, readability: { reason: expect.any(String) }, decision: { action: "deny", enforced: false } });
    });
  }

  for (const [name, line, id, recorded] of [
    ["a NUL after a denied call (a C-string reader reads the call, JSON.parse nothing)", `${DENIED}\0 trailing\n`, 2, { tool: "delete_everything", reason: /C string|first JSON value/ }],
    ["NaN in the arguments of a denied call (Python's json reads it)", `${call(3, "delete_everything", '{"n":NaN,"m":-Infinity}')}\n`, 3, { tool: "delete_everything", reason: /NaN/ }],
    ["an id past 2^53 (a JavaScript reader rounds it)", `${call("9007199254740993", "echo")}\n`, 9007199254740992, { tool: "echo", reason: /2\^53/ }],
  ] as const) {
    it(`${name}: refused in enforce mode (-32052 for its id), recorded with its tool and the doubt in monitor mode`, () => {
      const enforce = launch("enforce");
      enforce.tap.fromClient(Buffer.from(line));
      expect(enforce.server()).toBe("");
      expect(answers(enforce.client())).toEqual([expect.objectContaining({ id, error: expect.objectContaining({ code: -32052 }) })]);
      const monitor = launch("monitor");
      monitor.tap.fromClient(Buffer.from(line));
      expect(monitor.records.find((r) => r.tool === recorded.tool)).toMatchObject({ id, readability: { reason: expect.stringMatching(recorded.reason) } });
    });
  }

  it("a tool name cut by a bad byte (a decoder that drops it reads delete_everything): the denial holds in both modes", () => {
    const line = Buffer.concat([Buffer.from(call(4, "delete_").slice(0, -18)), Buffer.from([0xff]), Buffer.from('everything","arguments":{}}}\n')]);
    for (const mode of ["enforce", "monitor"] as const) {
      const run = launch(mode);
      run.tap.fromClient(line);
      const rec = run.records.find((r) => r.id === 4)!;
      expect(rec.decision!.rules.map((r) => r.name)).toContain("no-delete");
      if (mode === "enforce") expect(run.server()).toBe("");
    }
  });

  it("U+2028 and NEL inside a string of an allowed call: enforce mode forwards it escaped (the same JSON to every reader), recorded allowed", () => {
    const value = { jsonrpc: "2.0", id: 5, method: "tools/call", params: { name: "echo", arguments: { text: "one\u2028two\u0085three" } } };
    const enforce = launch("enforce");
    enforce.tap.fromClient(Buffer.from(`${JSON.stringify(value)}\n`));
    const sent = enforce.server();
    expect(sent).not.toMatch(/[\u2028\u0085]/);
    expect(JSON.parse(sent)).toEqual(value);
    expect(enforce.records.find((r) => r.id === 5)?.decision).toMatchObject({ action: "allow" });
    // Monitor mode forwards it as it is; the readers that cut it read nothing else: no doubt to record.
    const monitor = launch("monitor");
    monitor.tap.fromClient(Buffer.from(`${JSON.stringify(value)}\n`));
    expect(monitor.records.find((r) => r.id === 5)).not.toHaveProperty("readability");
  });

  it("a CR that only cuts a call in pieces no reader parses: refused in enforce mode, recorded plainly in monitor mode", () => {
    const line = Buffer.from('{"jsonrpc":"2.0",\r"id":6,"method":"ping"}\n');
    const enforce = launch("enforce");
    enforce.tap.fromClient(line);
    expect(enforce.server()).toBe("");
    expect(answers(enforce.client())).toEqual([expect.objectContaining({ id: 6, error: expect.objectContaining({ code: -32052 }) })]);
    const monitor = launch("monitor");
    monitor.tap.fromClient(line);
    expect(monitor.records.find((r) => r.id === 6)).toMatchObject({ method: "ping", decision: { action: "allow" } });
  });
});

describe("stdio: lines built to cost the readers", () => {
  it("more lines or values than a reading judges (a denied call after 2000 pieces between CRs): refused in enforce mode, flagged in monitor mode", () => {
    const pad = Array.from({ length: 2000 }, () => "\r0").join(",");
    const line = Buffer.from(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"pad":[${pad}],"x":\r${DENIED}\r}}}\n`);
    const enforce = launch("enforce");
    enforce.tap.fromClient(line);
    expect(enforce.server()).toBe("");
    const monitor = launch("monitor");
    monitor.tap.fromClient(line);
    expect(monitor.records.find((r) => r.id === 1)).toMatchObject({ readability: { reason: expect.stringMatching(/the rest were not judged/) }, decision: { action: "flag" } });
  });

  it("what the shim writes in place of a line is ASCII: a kept message's U+2028 and NEL travel as escapes", () => {
    const kept = { jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "echo", arguments: { text: "a\u2028b\u0085c" } } };
    const run = launch("enforce");
    run.tap.fromClient(Buffer.from(`${JSON.stringify([kept, { jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: 1, progress: 1 } }])}\n`));
    run.tap.fromServer(Buffer.from(`${JSON.stringify({ jsonrpc: "2.0", id: 7, result: { content: [{ type: "text", text: "x\u2028y" }] } })}\n`));
    for (const out of [run.server(), run.client()]) expect(out).not.toMatch(/[\u0080-\uffff]/);
  });
});

describe("stdio: a server hides a request in an answer", () => {
  const answer = '{"jsonrpc":"2.0","id":1,"result":{"content":[],"x":\r{"jsonrpc":"2.0","id":"s1","method":"sampling/createMessage","params":{"messages":[],"maxTokens":9}}\r}}\n';

  it("enforce: the answer becomes -32052 for its request, the hidden request never reaches the client and its sender gets -32052", () => {
    const run = launch("enforce");
    run.tap.fromClient(Buffer.from(`${ALLOWED}\n`));
    run.server();
    run.tap.fromServer(Buffer.from(answer));
    const toClient = run.client();
    expect(toClient).not.toContain("sampling/createMessage");
    expect(answers(toClient)).toEqual([expect.objectContaining({ id: 1, error: expect.objectContaining({ code: -32052 }) })]);
    expect(answers(run.server())).toEqual([expect.objectContaining({ id: "s1", error: expect.objectContaining({ code: -32052 }) })]);
    expect(run.records.find((r) => r.method === "sampling/createMessage")).toMatchObject({ direction: "server_to_client", kind: "request", decision: { action: "deny", enforced: true } });
  });

  it("monitor: forwarded as it is; the hidden request is a record of its own with the doubt", () => {
    const run = launch("monitor");
    run.tap.fromClient(Buffer.from(`${ALLOWED}\n`));
    run.tap.fromServer(Buffer.from(answer));
    expect(run.client()).toBe(answer);
    expect(run.records.find((r) => r.method === "sampling/createMessage")).toMatchObject({ direction: "server_to_client", kind: "request", id: "s1", readability: { reason: expect.stringMatching(/CR/) } });
  });
});

describe("stdio: an answer to no pending request", () => {
  const stray = '{"jsonrpc":"2.0","id":99,"result":{"content":[{"type":"text","text":"deleted"}]}}\n';

  it("enforce: recorded under unmatched-answer and dropped; an answer to a pending request still passes", () => {
    const run = launch("enforce");
    run.tap.fromServer(Buffer.from(stray));
    expect(run.client()).toBe("");
    expect(run.records.find((r) => r.id === 99)?.decision).toMatchObject({ action: "deny", enforced: true, effect: "dropped", rules: [expect.objectContaining({ name: "unmatched-answer" })] });
    run.tap.fromClient(Buffer.from(`${ALLOWED}\n`));
    const ok = '{"jsonrpc":"2.0","id":1,"result":{"content":[]}}\n';
    run.tap.fromServer(Buffer.from(ok));
    expect(run.client()).toBe(ok);
  });

  it("monitor: forwarded and flagged", () => {
    const run = launch("monitor");
    run.tap.fromServer(Buffer.from(stray));
    expect(run.client()).toBe(stray);
    expect(run.records.find((r) => r.id === 99)?.decision).toMatchObject({ action: "flag", rules: [expect.objectContaining({ name: "unmatched-answer", action: "flag" })] });
  });
});
