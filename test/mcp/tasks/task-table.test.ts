/**
 * The task table's edges, driven through the tracker with a clock of the test's: a task that outlives its
 * ttl, a task id another session already uses, a table full by entries and by bytes, a session that ends
 * with its task still working. Each is a record a user can find, never a silent loss.
 */
import { describe, expect, it } from "vitest";
import { McpTracker, type TrackedContext } from "../../../src/mcp/tracker.js";
import type { RpcEvent } from "../../../src/mcp/rpc-event.js";

const SERVER = "127.0.0.1:9";

function rig(limits: { maxPending: number; maxTableBytes?: number; peerShareDivisor?: number } = { maxPending: 100 }) {
  let clock = 1_000_000;
  const events: RpcEvent[] = [];
  const tracker = new McpTracker({ rpc: (e) => events.push(e), session: () => undefined }, { maxSessions: 10, ...limits }, () => clock);
  let flow = 0;
  const ctx = (session: string, direction: TrackedContext["direction"], server = SERVER): TrackedContext => ({
    flow: `f${++flow}`,
    transport: "streamable-http",
    server,
    path: "/mcp",
    session,
    protocolVersion: "2025-11-25",
    direction,
    scope: session,
  });
  const send = (session: string, message: Record<string, unknown>, server = SERVER) => tracker.message(ctx(session, "client_to_server", server), { jsonrpc: "2.0", ...message }, 100);
  const answer = (session: string, message: Record<string, unknown>, server = SERVER) => tracker.message(ctx(session, "server_to_client", server), { jsonrpc: "2.0", ...message }, 100);
  /** A tools/call asking for a task, and the answer that creates it. */
  const create = (session: string, id: number, taskId: string, ttl: number | null = 60_000, server = SERVER) => {
    send(session, { id, method: "tools/call", params: { name: "slow", arguments: {}, task: {} } }, server);
    return answer(session, { id, result: { task: { taskId, status: "working", ttl, createdAt: "", lastUpdatedAt: "" } } }, server);
  };
  return { tracker, events, send, answer, create, advance: (ms: number) => (clock += ms) };
}

const lost = (events: RpcEvent[]) => events.filter((e) => e.kind === "unanswered" && e.task !== undefined);

describe("the task table", () => {
  it("a task that outlives its ttl without ending is reported unanswered, with the call's tool, id and latency", () => {
    const { events, create, send, advance } = rig();
    create("s1", 1, "t-1", 5_000);
    advance(4_000);
    send("s1", { id: 2, method: "tasks/get", params: { taskId: "t-1" } });
    expect(lost(events)).toEqual([]);
    advance(2_000);
    send("s1", { id: 3, method: "ping" });
    expect(lost(events)).toMatchObject([
      { method: "tools/call", tool: "slow", id: 1, latencyMs: 6_000, reason: "the task outlived its ttl (5000 ms) without reaching a terminal state", task: { id: "t-1", status: "working" } },
    ]);
    const late = send("s1", { id: 4, method: "tasks/get", params: { taskId: "t-1" } });
    expect(late.task?.problem).toMatch(/never saw created/);
  });

  it("a task id another session already uses is recorded as such; polls stay with their own session's task", () => {
    const { create, send } = rig();
    create("s1", 1, "shared");
    const second = create("s2", 1, "shared");
    expect(second.task).toMatchObject({ id: "shared", created: true, problem: "task id already used by another session" });
    const poll = send("s1", { id: 2, method: "tasks/get", params: { taskId: "shared" } });
    expect(poll).toMatchObject({ tool: "slow", call: "f1#n:1", task: { id: "shared" } });
    expect(poll.task?.problem).toBeUndefined();
  });

  it("a status notification from the server and a related-task elicitation carry the call; the requester of a task may be the server", () => {
    const { tracker, events, create } = rig();
    create("s1", 1, "t-1");
    const ctx = (direction: TrackedContext["direction"]): TrackedContext => ({ flow: "g", transport: "streamable-http", server: SERVER, path: "/mcp", session: "s1", protocolVersion: null, direction, scope: "s1" });
    const input = tracker.message(ctx("server_to_client"), { jsonrpc: "2.0", id: 9, method: "elicitation/create", params: { message: "which?", requestedSchema: {}, _meta: { "io.modelcontextprotocol/related-task": { taskId: "t-1" } } } }, 10);
    expect(input).toMatchObject({ call: "f1#n:1", tool: "slow", task: { id: "t-1" } });
    const reply = tracker.message(ctx("client_to_server"), { jsonrpc: "2.0", id: 9, result: { action: "accept", content: {} } }, 10);
    expect(reply).toMatchObject({ method: "elicitation/create", call: "f1#n:1", task: { id: "t-1" } });
    // The server asks the client for a sampling task: the server is the requester, the client's answer creates it.
    tracker.message(ctx("server_to_client"), { jsonrpc: "2.0", id: 10, method: "sampling/createMessage", params: { messages: [], maxTokens: 5, task: {} } }, 10);
    tracker.message(ctx("client_to_server"), { jsonrpc: "2.0", id: 10, result: { task: { taskId: "c-1", status: "working", ttl: null } } }, 10);
    const poll = tracker.message(ctx("server_to_client"), { jsonrpc: "2.0", id: 11, method: "tasks/get", params: { taskId: "c-1" } }, 10);
    expect(poll).toMatchObject({ call: "g#n:10", task: { id: "c-1" } });
    expect(poll.task?.problem).toBeUndefined();
    const status = tracker.message(ctx("client_to_server"), { jsonrpc: "2.0", method: "notifications/tasks/status", params: { taskId: "c-1", status: "completed", ttl: null } }, 10);
    expect(status.task).toMatchObject({ status: "completed", end: { status: "completed" } });
    expect(events.filter((e) => e.task?.problem !== undefined)).toEqual([]);
  });

  it("bounded by entries: past --max-pending tasks, the oldest one not ended is reported, ended ones go first and quietly", () => {
    const { tracker, events, create, answer, send } = rig({ maxPending: 2, peerShareDivisor: 1 });
    create("s1", 1, "a");
    create("s1", 2, "b");
    send("s1", { id: 3, method: "tasks/cancel", params: { taskId: "b" } });
    answer("s1", { id: 3, result: { taskId: "b", status: "cancelled", ttl: null } });
    create("s1", 4, "c"); // b ended: it goes, quietly
    expect(lost(events)).toEqual([]);
    create("s1", 5, "d"); // a is the oldest not ended
    expect(lost(events)).toMatchObject([{ id: 1, task: { id: "a" }, reason: expect.stringMatching(/task table was full/) }]);
    expect(tracker.tasks.usage.entries).toBe(2);
  });

  it("bounded by bytes: long tool names and ids fill a quarter of the table bytes at most", () => {
    const { tracker, events, send, answer } = rig({ maxPending: 10_000, maxTableBytes: 400_000, peerShareDivisor: 1 });
    for (let i = 0; i < 200; i++) {
      send("s1", { id: i, method: "tools/call", params: { name: `t${"x".repeat(5_000)}`, arguments: {}, task: {} } });
      answer("s1", { id: i, result: { task: { taskId: `${i}-${"y".repeat(200)}`, status: "working", ttl: null } } });
    }
    expect(tracker.tasks.usage.bytes).toBeLessThanOrEqual(100_000);
    expect(lost(events).length).toBeGreaterThan(150);
  });

  it("a task id past 256 bytes is recorded, not followed; a session that ends with its task working reports it", () => {
    const { tracker, events, create } = rig();
    const long = create("s1", 1, "z".repeat(300));
    expect(long.task).toMatchObject({ created: true, problem: "task id longer than 256 bytes: not followed" });
    expect(long.task!.id.length).toBeLessThan(80);
    create("s1", 2, "t-2");
    tracker.endSession(SERVER, "s1", "deleted");
    expect(lost(events)).toMatchObject([{ id: 2, reason: "session ended (deleted) before the task reached a terminal state" }]);
    expect(tracker.tasks.usage.entries).toBe(0);
  });

  it("a server that creates tasks without end evicts only its own: another server's working task is still followed", () => {
    const { tracker, events, create, send } = rig({ maxPending: 80 });
    create("honest", 1, "h-1", null, "127.0.0.1:10");
    for (let i = 0; i < 200; i++) create("flood", 100 + i, `f-${i}`, null, "127.0.0.1:11");
    // The flooding server holds its share (an eighth of 80) and lost its own oldest tasks, each reported.
    expect(lost(events).every((e) => e.server === "127.0.0.1:11")).toBe(true);
    expect(lost(events)[0]).toMatchObject({ reason: expect.stringMatching(/127\.0\.0\.1:11 holds its whole share of the task table/) });
    expect(tracker.tasks.usage.entries).toBe(11);
    const poll = send("honest", { id: 2, method: "tasks/get", params: { taskId: "h-1" } }, "127.0.0.1:10");
    expect(poll.task).toMatchObject({ id: "h-1" });
    expect(poll.task?.problem).toBeUndefined();
  });
});
