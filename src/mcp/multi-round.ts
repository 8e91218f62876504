import { nodeCrypto } from "../util/lazy-crypto.js";
import { ENTRY_OVERHEAD, textBytes, type EvictionSink, type TableBounds } from "../bounds/evictions.js";
import { SharedTable } from "../bounds/shared-table.js";
import { idKey, type RequestId } from "./jsonrpc.js";
import { serverPeer } from "./table-peer.js";

/** Where a message stands in a multi-round call (2026-07-28: `input_required` results and their retries). */
export interface RoundInfo {
  /** Shared by every round of the call: the first request's flow and id. Absent for a retry of an unknown round. */
  call?: string;
  /** 1 for the first request and its answer, 2 for the first retry, … */
  round?: number;
  /** What is wrong with a retry (its requestState is not the one the server issued). */
  roundProblem?: string;
}

/** What a request knows about its call (kept with the pending request until its answer). */
export interface RoundOf {
  server: string;
  session: string | null;
  flow: string;
  id: RequestId;
  method: string;
  tool: string | undefined;
  call?: string;
  round?: number;
}

interface OpenRound {
  call: string;
  round: number;
  group: string;
  /** SHA-256 of the requestState the server issued (its JSON; "" when it issued none). */
  state: string;
}

/**
 * Multi-round requests: a result with `resultType: "input_required"` carries `requestState`; the client
 * retries with a new id, carrying `inputResponses` and the same `requestState`. Those rounds are one call.
 * A retry is matched to the open round of the same server, session, method and tool whose requestState it
 * echoes; a retry whose requestState matches none of them is tied to the latest and flagged. Bounded by
 * entries and bytes (a session id or a tool name is as long as a peer makes it), each server (whose answer
 * opened the round) to a share: past either the oldest open round (of that server, else of all) is
 * forgotten, and a `table_evicted` record says so.
 */
export class MultiRoundCalls {
  private readonly byGroup = new Map<string, OpenRound[]>();
  private readonly byCall: SharedTable<OpenRound>;

  constructor(bounds: TableBounds, report: EvictionSink = () => undefined, share?: TableBounds) {
    this.byCall = new SharedTable("multi_round", bounds, report, (round) => this.ungroup(round), share);
  }

  /** Writes the evictions still counted (at shutdown). */
  flushEvictions(): void {
    this.byCall.flushEvictions();
  }

  /** Open rounds held, and the bytes they take. */
  get usage(): { entries: number; bytes: number } {
    return this.byCall.usage;
  }

  /** A request: its round when it retries an input_required result, else undefined. */
  retry(r: Omit<RoundOf, "flow" | "id" | "call" | "round">, params: Record<string, unknown> | undefined): RoundInfo | undefined {
    if (!params || !("inputResponses" in params || "requestState" in params)) return undefined;
    const open = this.byGroup.get(groupOf(r)) ?? [];
    const state = stateHash(params.requestState);
    const exact = open.findLast((o) => o.state === state);
    if (exact) return { call: exact.call, round: exact.round + 1 };
    const latest = open.at(-1);
    if (!latest) return { roundProblem: "retry (inputResponses/requestState) of no input_required result the proxy saw" };
    const problem = params.requestState === undefined ? "retry without the requestState the server issued" : "requestState differs from the one the server issued (tampered?)";
    return { call: latest.call, round: latest.round + 1, roundProblem: problem };
  }

  /** A response to `request`: the call and round it belongs to, when it is part of a multi-round call. */
  answered(request: RoundOf, result: Record<string, unknown> | undefined): RoundInfo | undefined {
    const inputRequired = result?.resultType === "input_required";
    if (request.call !== undefined) this.close(request.call);
    if (!inputRequired) return request.call === undefined ? undefined : { call: request.call, round: request.round ?? 1 };
    const call = request.call ?? `${request.flow}#${idKey(request.id)}`;
    const round: OpenRound = { call, round: request.round ?? 1, group: groupOf(request), state: stateHash(result?.requestState) };
    // A request id used again on the same flow (one flow per stdio launch) starts a new call: the old one goes.
    this.close(call);
    const group = this.byGroup.get(round.group);
    if (group) group.push(round);
    else this.byGroup.set(round.group, [round]);
    // Last: holding it may evict older rounds (of this server, else of all), each taken out of its group.
    this.byCall.set(call, round, serverPeer(request.server), roundBytes(round));
    return { call, round: round.round };
  }

  private close(call: string): void {
    const open = this.byCall.delete(call);
    if (open) this.ungroup(open);
  }

  private ungroup(open: OpenRound): void {
    const group = this.byGroup.get(open.group) ?? [];
    const at = group.indexOf(open);
    if (at !== -1) group.splice(at, 1);
    if (group.length === 0) this.byGroup.delete(open.group);
  }
}

/** Its call (twice: the entry and its key), its group's key, its state hash and the overhead. */
function roundBytes(r: OpenRound): number {
  return textBytes(r.call, r.call, r.group, r.state) + ENTRY_OVERHEAD;
}

function groupOf(r: { server: string; session: string | null; method: string; tool: string | undefined }): string {
  return JSON.stringify([r.server, r.session, r.method, r.tool ?? null]);
}

function stateHash(state: unknown): string {
  return state === undefined ? "" : nodeCrypto().hash("sha256", JSON.stringify(state) ?? "", "hex");
}
