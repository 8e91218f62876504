import { shapePayload } from "../log/payload.js";
import type { Judged } from "../mcp/rpc-event.js";
import type { PayloadOptions } from "../records/rpc-record.js";
import type { InterceptFilter } from "./filter.js";
import { HoldQueue, type HeldAction, type HeldEntry, type HeldInfo, type HoldOutcome } from "./hold-queue.js";
import { maskedMessage, unmaskEdit } from "./masked-view.js";

export const DEFAULT_INTERCEPT_TIMEOUT_MS = 60_000;
/** Bytes of messages held at once (each also stays charged to the inspection budget while it waits). */
export const DEFAULT_INTERCEPT_MAX_BYTES = 16 * 1024 * 1024;
export const DEFAULT_INTERCEPT_MAX_ENTRIES = 256;

export interface InterceptorOptions {
  filter: InterceptFilter;
  queue: HoldQueue;
  /** Writes one `intercept` record (warn: `loud`). */
  write(record: Record<string, unknown>, loud: boolean): void;
  /** The exchange's and session's known credentials removed by value (the log sink's table). */
  scrub<T extends Record<string, unknown>>(record: T): T;
  payloads: PayloadOptions;
  /** An edit larger than this (as JSON) could not be judged whole (`--max-inspect-bytes`): it is refused. */
  maxEditBytes: number;
}

/** What the transport does with a held message: send it (as it was, or as edited) or answer its sender. */
export type Release = { send: "original" } | { send: "edited"; message: unknown } | { send: "nothing"; action: "dropped" | "timeout"; reason: string };

/** A held message as the UI lists it: masked, its exchange's credentials removed. */
export interface HeldView extends Omit<HeldEntry, "message" | "bytes" | "peer"> {
  message: unknown;
  bytes: number;
}

/**
 * `--intercept`: which judged messages are held, the queue that holds them, and the `intercept` record of what
 * was done with each. The transports (http-hold.ts, stdio-hold.ts) hold and release; the UI lists and acts.
 */
export class Interceptor {
  constructor(private readonly o: InterceptorOptions) {}

  get queue(): HoldQueue {
    return this.o.queue;
  }

  /** Whether any message of a body or line is to be held (its messages go out together, or not at all). */
  matches(judged: readonly Judged[]): boolean {
    return judged.some((j) => !j.decision.enforced && this.o.filter(j));
  }

  /** Bytes that may wait in one place at most (a stdio direction's lines behind held ones). */
  get maxWaitingBytes(): number {
    return this.o.queue.limits.maxBytes;
  }

  /**
   * Holds `message` (what the judged messages would put on the wire) until a person or the timeout releases it,
   * and records what was done.
   */
  async hold(where: HeldPlace, judged: readonly Judged[], message: unknown): Promise<Release> {
    const info: HeldInfo = { ...where, ...heldInfo(judged) };
    const heldAt = Date.now();
    const bytes = Buffer.byteLength(JSON.stringify(message) ?? "");
    const waiting = this.o.queue.hold(info, message, bytes);
    if (waiting === "queue_full") {
      const { maxBytes, maxEntries, maxPeerBytes = maxBytes, maxPeerEntries = maxEntries } = this.o.queue.limits;
      const reason = `dropped at the proxy: the intercept queue is full (${maxEntries} messages or ${maxBytes} bytes held, ${maxPeerEntries} messages or ${maxPeerBytes} bytes of one peer)`;
      this.record(info, { action: "dropped" }, heldAt, message, reason);
      return { send: "nothing", action: "dropped", reason };
    }
    const outcome = await waiting;
    const reason =
      outcome.action === "timeout"
        ? `dropped at the proxy: not released within the intercept timeout (${this.o.queue.limits.timeoutMs} ms)`
        : outcome.action === "dropped" && outcome.reason !== undefined
          ? `dropped at the proxy: ${outcome.reason}`
          : "dropped at the proxy by the person intercepting it";
    this.record(info, outcome, heldAt, message, outcome.action === "dropped" || outcome.action === "timeout" ? reason : undefined);
    if (outcome.action === "forwarded") return { send: "original" };
    if (outcome.action === "edited") return { send: "edited", message: outcome.message };
    return { send: "nothing", action: outcome.action, reason };
  }

  /** The proxy's answer to a server's dropped request did not reach it (src/intercept/server-answer.ts). */
  answerFailed(where: HeldPlace, judged: readonly Judged[], reason: string): void {
    const info = { ...where, ...heldInfo(judged) };
    const record = { event: "intercept", flow: info.flow, transport: info.transport, server: info.server, session: info.session, direction: info.direction, id: info.id ?? null, method: info.method ?? null, tool: info.tool ?? null, action: "answer_failed", heldMs: 0, reason };
    this.o.write(record, true);
  }

  /** The held messages, as the UI shows them. */
  list(): HeldView[] {
    return this.o.queue.list().map((e) => this.view(e));
  }

  /**
   * A person's answer from the UI. `edited`: the message as they left it (masked values they did not touch are
   * put back). False when the message is no longer held; a string says why an edit is refused (it stays held).
   */
  release(hold: string, action: "forward" | "drop" | "edit", edited?: unknown): boolean | string {
    const entry = this.o.queue.get(hold);
    if (!entry) return false;
    if (action === "forward") return this.o.queue.settle(hold, { action: "forwarded" });
    if (action === "drop") return this.o.queue.settle(hold, { action: "dropped" });
    const message = unmaskEdit(edited, this.view(entry).message, entry.message);
    // What goes out must be judged whole, as any message is: an edit past what the proxy inspects is not sent.
    const bytes = Buffer.byteLength(JSON.stringify(message) ?? "");
    if (bytes > this.o.maxEditBytes) return `the edit is ${bytes} bytes, more than --max-inspect-bytes (${this.o.maxEditBytes}): it could not be judged`;
    return this.o.queue.settle(hold, { action: "edited", message });
  }

  private view(e: HeldEntry): HeldView {
    const { message, bytes, peer: _peer, ...rest } = e;
    const scrubbed = this.o.scrub({ flow: e.flow, session: e.session, message: maskedMessage(message) });
    return { ...rest, message: scrubbed.message, bytes };
  }

  private record(info: HeldInfo, outcome: HoldOutcome, heldAt: number, held: unknown, reason?: string): void {
    const action: HeldAction = outcome.action;
    const shape = (v: unknown): unknown => shapePayload(maskedMessage(v), this.o.payloads.payloads, this.o.payloads.maxPayloadBytes);
    const record: Record<string, unknown> = {
      event: "intercept",
      flow: info.flow,
      transport: info.transport,
      server: info.server,
      session: info.session,
      direction: info.direction,
      id: info.id ?? null,
      method: info.method ?? null,
      tool: info.tool ?? null,
      action,
      heldMs: Date.now() - heldAt,
      ...(reason !== undefined ? { reason } : {}),
    };
    const message = shape(held);
    if (message !== undefined) record.message = message;
    if (outcome.action === "edited") {
      const edited = shape(outcome.message);
      if (edited !== undefined) record.edited = edited;
    }
    this.o.write(record, action === "dropped" || action === "timeout");
  }
}

/** Where a held message was seen. */
export type HeldPlace = Pick<HeldInfo, "flow" | "peer" | "server" | "session" | "transport">;

/** What a held message is about, from its first judged message (a batch is held whole). */
function heldInfo(judged: readonly Judged[]): Omit<HeldInfo, keyof HeldPlace> {
  const first = (judged.find((j) => j.event.kind !== "invalid") ?? judged[0])!.event;
  return {
    direction: first.direction,
    ...(first.id !== undefined ? { id: first.id } : {}),
    ...(first.method !== undefined ? { method: first.method } : {}),
    ...(first.tool !== undefined ? { tool: first.tool } : {}),
  };
}
