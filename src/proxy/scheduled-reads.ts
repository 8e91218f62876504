import { performance } from "node:perf_hooks";
import type { BodyRead, ExchangeRecord } from "./exchange-record.js";
import { peerKey } from "./peer-key.js";
import { joinedGate } from "./read-gate.js";
import type { ReadScheduler } from "./read-scheduler.js";

/**
 * Puts an exchange's two bodies under the scheduler: the request is read while the exchange's gate and its
 * client's are open and its cost is the client's, the response likewise with its server. Returns what to call
 * when the exchange ends.
 */
export function scheduleReads(ex: ExchangeRecord, scheduler: ReadScheduler): () => void {
  const turns = scheduler.exchange(peerKey(ex, "client_to_server"), peerKey(ex, "server_to_client"));
  const request = joinedGate(ex.readGate, turns.request.gate);
  const response = joinedGate(ex.readGate, turns.response.gate);
  ex.requestRead = { gate: request.gate, turn: turns.request };
  ex.responseRead = { gate: response.gate, turn: turns.response };
  return () => {
    request.stop();
    response.stop();
    turns.end();
  };
}

let timing = false;

/** Runs `work`, charging its loop time to the body's sender (once: work timed inside it is not charged again). */
export function charged<T>(read: Pick<BodyRead, "turn">, work: () => T): T {
  const spent = read.turn?.spent;
  if (!spent || timing) return work();
  timing = true;
  const t0 = performance.now();
  try {
    return work();
  } finally {
    timing = false;
    spent(performance.now() - t0);
  }
}
