/**
 * The token report of a log's lines, put together in turns of the event loop, for a process that may be
 * the proxy (the web UI's server, `export --html`): the same steps as `tokenCosts`, with a turn of the loop
 * after every few thousand lines parsed and every few KB tokenized. Tools are reported per server address
 * (`host:port`), as the UI's tool stats group calls.
 */
import { setImmediate as yieldToLoop } from "node:timers/promises";
import { buildCalls } from "../analysis/calls.js";
import type { LogRecord } from "../saved-logs/filters.js";
import { loadTokenCounter, TOKEN_ENCODING } from "./token-counter.js";
import { callTokens, listTokens, toolTokens, type CallTokens, type ListTokens, type ToolTokens } from "./token-costs.js";

/** Lines parsed between two turns. */
const LINES_PER_TURN = 1_000;
/** Characters tokenized between two turns (o200k_base reads a few MB/s: a few ms a turn). */
const CHARS_PER_TURN = 32 * 1024;

export interface AddressTools {
  /** `host:port` of the calls, or null when the log does not say. */
  address: string | null;
  tools: ToolTokens[];
}

export interface UiTokenReport {
  encoding: typeof TOKEN_ENCODING;
  estimate: true;
  lists: ListTokens[];
  byAddress: AddressTools[];
}

export async function tokenReportInTurns(lines: readonly string[]): Promise<UiTokenReport> {
  const records: LogRecord[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (i > 0 && i % LINES_PER_TURN === 0) await yieldToLoop();
    try {
      const r: unknown = JSON.parse(lines[i]!);
      if (r !== null && typeof r === "object" && !Array.isArray(r)) records.push(r as LogRecord);
    } catch {
      // Not a record (a followed file can hold anything): the page counts it already.
    }
  }
  await yieldToLoop();
  const calls = buildCalls(records);
  const tokenize = await loadTokenCounter();
  let chars = 0;
  const count = (text: string): number => {
    chars += text.length;
    return tokenize(text);
  };
  const lists = listTokens(records, count);
  const byAddress = new Map<string | null, CallTokens[]>();
  for (const call of calls) {
    const measured = callTokens(call, count);
    if (measured) {
      const list = byAddress.get(call.server) ?? [];
      list.push(measured);
      byAddress.set(call.server, list);
    }
    if (chars >= CHARS_PER_TURN) {
      chars = 0;
      await yieldToLoop();
    }
  }
  return { encoding: TOKEN_ENCODING, estimate: true, lists, byAddress: [...byAddress].map(([address, measured]) => ({ address, tools: toolTokens(measured) })) };
}
