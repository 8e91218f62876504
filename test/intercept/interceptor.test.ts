/**
 * The interceptor alone: the hold queue's bounds (bytes and entries: past them a message is dropped, not held),
 * its timeout, and what the UI and the records see of a held message (secrets masked; an untouched mask goes
 * out as the original value, never as the mask).
 */
import { describe, expect, it } from "vitest";
import { HoldQueue } from "../../src/intercept/hold-queue.js";
import { DEFAULT_INTERCEPT_MAX_ENTRIES, Interceptor, type HeldPlace } from "../../src/intercept/interceptor.js";
import { createInterceptor } from "../../src/intercept/create-interceptor.js";
import { PEER_SHARE_DIVISOR } from "../../src/budget/inspect-budget.js";
import { parseInterceptFilter } from "../../src/intercept/filter.js";
import type { Judged } from "../../src/mcp/rpc-event.js";

const AWS_KEY = "AKIA" + "IOSFODNN7EXAMPLE";
const place: HeldPlace = { flow: "f-1", peer: "client 127.0.0.1", server: "127.0.0.1:1", session: "s-1", transport: "streamable-http" };

function judgedCall(tool: string, args: Record<string, unknown>, action: "allow" | "deny" | "flag" = "allow"): { judged: Judged[]; message: Record<string, unknown> } {
  const message = { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: tool, arguments: args } };
  const event = { kind: "request", direction: "client_to_server", server: place.server, session: place.session, id: 1, method: "tools/call", tool, raw: message };
  return { judged: [{ event, decision: { action, enforced: false, rules: [] } }] as unknown as Judged[], message };
}

function interceptor(limits: { maxBytes?: number; maxEntries?: number; timeoutMs?: number } = {}) {
  const records: Record<string, unknown>[] = [];
  const queue = new HoldQueue({ maxBytes: limits.maxBytes ?? 1 << 20, maxEntries: limits.maxEntries ?? 16, timeoutMs: limits.timeoutMs ?? 60_000 });
  const i = new Interceptor({ filter: parseInterceptFilter("tool:echo"), queue, write: (r) => void records.push(r), scrub: (r) => r, payloads: { payloads: "full", maxPayloadBytes: 65536 }, maxEditBytes: 4096 });
  return { i, queue, records };
}

describe("the filter", () => {
  it("takes tail's tokens and dir:, and refuses free text and an empty filter", () => {
    const f = parseInterceptFilter("tool:echo,get-* dir:client");
    expect(f(judgedCall("echo", {}).judged[0]!)).toBe(true);
    expect(f(judgedCall("get-sum", {}).judged[0]!)).toBe(true);
    expect(f(judgedCall("other", {}).judged[0]!)).toBe(false);
    expect(parseInterceptFilter("decision:flag")(judgedCall("x", {}, "flag").judged[0]!)).toBe(true);
    expect(() => parseInterceptFilter("echo")).toThrow(/only the tokens/);
    expect(() => parseInterceptFilter("status:error")).toThrow(/only the tokens/);
    expect(() => parseInterceptFilter("  ")).toThrow(/needs a filter/);
  });
});

describe("the hold queue is bounded", () => {
  it("past its bytes a message is not held: dropped at once, recorded, and its sender told why", async () => {
    const { i, records } = interceptor({ maxBytes: 300 });
    const small = judgedCall("echo", { message: "x" });
    const first = i.hold(place, small.judged, small.message);
    const big = judgedCall("echo", { message: "y".repeat(400) });
    const second = await i.hold(place, big.judged, big.message);
    expect(second).toMatchObject({ send: "nothing", action: "dropped" });
    expect((second as { reason: string }).reason).toMatch(/queue is full/);
    expect(records.at(-1)).toMatchObject({ event: "intercept", action: "dropped" });
    expect(i.list()).toHaveLength(1);
    i.queue.dropAll();
    await first;
  });

  it("past its entries too", async () => {
    const { i } = interceptor({ maxEntries: 2 });
    const m = judgedCall("echo", { message: "x" });
    const held = [i.hold(place, m.judged, m.message), i.hold(place, m.judged, m.message)];
    expect(await i.hold(place, m.judged, m.message)).toMatchObject({ send: "nothing", action: "dropped" });
    i.queue.dropAll();
    await Promise.all(held);
    expect(i.queue.bytes).toBe(0);
  });

  it("one peer holds at most its share: a hostile client filling the queue leaves room for the others", async () => {
    const sink = { logger: { info: () => undefined, warn: () => undefined }, secrets: { scrub: <T>(r: T): T => r } };
    const i = createInterceptor({ filter: "tool:echo", timeoutMs: 60_000 }, sink as never, { payloads: "full", maxPayloadBytes: 65536 }, 4096);
    const m = judgedCall("echo", { message: "x" });
    const held = Array.from({ length: DEFAULT_INTERCEPT_MAX_ENTRIES }, () => i.hold({ ...place, peer: "client 127.0.0.9" }, m.judged, m.message));
    const other = i.hold({ ...place, flow: "f-other", peer: "client 127.0.0.1" }, m.judged, m.message);
    expect(i.list().filter((v) => v.flow === "f-other")).toHaveLength(1);
    expect(i.list().length).toBeLessThanOrEqual(DEFAULT_INTERCEPT_MAX_ENTRIES / PEER_SHARE_DIVISOR + 1);
    i.queue.dropAll();
    expect(await other).toMatchObject({ send: "nothing", action: "dropped" });
    await Promise.all(held);
    expect(i.queue.bytes).toBe(0);
  });

  it("a message nobody releases is dropped at the timeout (fail closed), and its bytes are freed", async () => {
    const { i, records } = interceptor({ timeoutMs: 30 });
    const m = judgedCall("echo", { message: "x" });
    expect(await i.hold(place, m.judged, m.message)).toMatchObject({ send: "nothing", action: "timeout" });
    expect(records.at(-1)).toMatchObject({ action: "timeout", id: 1, tool: "echo", direction: "client_to_server" });
    expect(i.queue.bytes).toBe(0);
    expect(i.release("1", "forward")).toBe(false);
  });
});

describe("an edit must be judged whole", () => {
  it("an edit larger than --max-inspect-bytes is refused with the reason, and the message stays held", async () => {
    const { i } = interceptor();
    const m = judgedCall("echo", { message: "x" });
    const done = i.hold(place, m.judged, m.message);
    const [view] = i.list();
    const refusal = i.release(view!.hold, "edit", { ...m.message, params: { name: "echo", arguments: { message: "z".repeat(5000) } } });
    expect(refusal).toMatch(/more than --max-inspect-bytes/);
    expect(i.list()).toHaveLength(1);
    expect(i.release(view!.hold, "forward")).toBe(true);
    expect(await done).toEqual({ send: "original" });
  });
});

describe("what the UI and the records see of a held message", () => {
  it("secrets are masked in the list and in the record; a mask left untouched goes out as the original value", async () => {
    const { i, records } = interceptor();
    const m = judgedCall("echo", { message: `key ${AWS_KEY}`, password: "hunter2-hunter2", note: "plain" });
    const done = i.hold(place, m.judged, m.message);
    const [view] = i.list();
    const shown = JSON.stringify(view!.message);
    expect(shown).not.toContain(AWS_KEY);
    expect(shown).not.toContain("hunter2-hunter2");
    // The person edits one plain value and leaves the masks as they are.
    const edited = JSON.parse(shown) as { params: { arguments: Record<string, string> } };
    edited.params.arguments.note = "changed";
    expect(i.release(view!.hold, "edit", edited)).toBe(true);
    const release = (await done) as { send: "edited"; message: { params: { arguments: Record<string, string> } } };
    expect(release.send).toBe("edited");
    expect(release.message.params.arguments).toEqual({ message: `key ${AWS_KEY}`, password: "hunter2-hunter2", note: "changed" });
    const record = JSON.stringify(records.at(-1));
    expect(records.at(-1)).toMatchObject({ action: "edited" });
    expect(record).not.toContain(AWS_KEY);
    expect(record).not.toContain("hunter2-hunter2");
    expect(record).toContain("changed");
  });

  it("a mask the person moved elsewhere stays the mask's text: a secret is never copied into another place", async () => {
    const { i } = interceptor();
    const m = judgedCall("echo", { message: `key ${AWS_KEY}` });
    const done = i.hold(place, m.judged, m.message);
    const [view] = i.list();
    const masked = (view!.message as { params: { arguments: { message: string } } }).params.arguments.message;
    i.release(view!.hold, "edit", { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "echo", arguments: { other: masked } } });
    const release = (await done) as { message: unknown };
    expect(JSON.stringify(release.message)).not.toContain(AWS_KEY);
  });

  it("a masked entry the person deleted from a list never goes out in the place of the one they kept", async () => {
    const { i } = interceptor();
    const m = judgedCall("echo", { credentials: [{ token: "prod-token-aaaaaaaaaaaa" }, { token: "test-token-bbbbbbbbbbbb" }] });
    const done = i.hold(place, m.judged, m.message);
    const [view] = i.list();
    const shown = view!.message as { params: { arguments: { credentials: unknown[] } } };
    // Both entries show the same mask; the person removes the first (the production token) and forwards the rest.
    const edited = structuredClone(shown);
    edited.params.arguments.credentials.shift();
    expect(i.release(view!.hold, "edit", edited)).toBe(true);
    const release = (await done) as { message: unknown };
    expect(JSON.stringify(release.message)).not.toContain("prod-token-aaaaaaaaaaaa");
  });
});

describe("the proxy's answer to a server", () => {
  it("one that did not reach the server is a warn intercept record `answer_failed`, valid as the log format says", async () => {
    const { InterceptRecordSchema } = await import("../../src/records/schemas/intercept.js");
    const { i, records } = interceptor();
    const asked = [{ event: { kind: "request", direction: "server_to_client", id: 7, method: "sampling/createMessage" }, decision: { action: "allow", enforced: false, rules: [] } }] as unknown as Judged[];
    i.answerFailed(place, asked, "the server refused the proxy's answer: HTTP 500");
    expect(records).toEqual([expect.objectContaining({ event: "intercept", action: "answer_failed", direction: "server_to_client", id: 7, method: "sampling/createMessage", reason: "the server refused the proxy's answer: HTTP 500" })]);
    expect(InterceptRecordSchema.safeParse({ level: "warn", time: new Date().toISOString(), ...records[0] }).success).toBe(true);
  });
});
