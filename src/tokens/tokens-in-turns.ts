/**
 * The token report of a log's lines, put together in turns of the event loop, for a process that may be
 * the proxy (the web UI's server, `export --html`): the same steps as `tokenCosts`, with a turn of the loop
 * after every few thousand lines parsed. The texts to count go to `countBatch` (the UI server's: a worker
 * thread) in batches of bounded size, one batch answered while the next is gathered. Tools are reported per
 * server address (`host:port`), as the UI's tool stats group calls.
 */
import { setImmediate as yieldToLoop } from "node:timers/promises";
import { CallPairing } from "../analysis/calls.js";
import { sum } from "../analysis/percentiles.js";
import type { LogRecord } from "../saved-logs/filters.js";
import { eachInTurns, recordsInTurns } from "../saved-logs/lines-in-turns.js";
import { TOKEN_ENCODING, type CountBatch } from "./token-counter.js";
import { callTokens, listTokens, toolTokens, type CallTokens, type ListTokens, type ToolTokens } from "./token-costs.js";

/** Characters of texts in one batch (a batch ends with the text that reaches this: a larger text goes alone). */
const BATCH_CHARS = 256 * 1024;
/** Texts in one batch. */
const BATCH_TEXTS = 2_000;

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

export async function tokenReportInTurns(lines: readonly string[], countBatch: CountBatch): Promise<UiTokenReport> {
  const records = (await recordsInTurns(lines)).map((r) => r.record);
  const pairing = new CallPairing();
  await eachInTurns(records, (r) => pairing.add(r));
  const calls = pairing.calls;
  const batches = new Batches(countBatch);
  // Counted as tokenCosts counts, with the index of each text in place of its tokens until all are answered.
  const listed = listTokens(records, batches.add);
  const byAddress = new Map<string | null, CallTokens[]>();
  for (const call of calls) {
    const measured = callTokens(call, batches.add);
    if (measured) {
      const list = byAddress.get(call.server) ?? [];
      list.push(measured);
      byAddress.set(call.server, list);
    }
    if (batches.full()) await batches.send();
  }
  const tokens = await batches.all();
  const of = (index: number | null): number | null => (index === null ? null : tokens[index]!);
  const lists = listed.map((list): ListTokens => {
    const tools = list.tools.map((t) => ({ name: t.name, tokens: tokens[t.tokens]! }));
    return { ...list, tools, total: sum(tools.map((t) => t.tokens)) };
  });
  return {
    encoding: TOKEN_ENCODING,
    estimate: true,
    lists,
    byAddress: [...byAddress].map(([address, measured]) => ({ address, tools: toolTokens(measured.map((m) => ({ tool: m.tool, arguments: of(m.arguments), result: of(m.result) }))) })),
  };
}

/** The texts to count, sent in batches of bounded size, each sent once the one before is answered. */
class Batches {
  private readonly tokens: number[] = [];
  /** Batches gathered and not yet sent (more than one only while a single step adds many texts). */
  private readonly ready: string[][] = [];
  private gathered: string[] = [];
  private chars = 0;
  private added = 0;
  private sent = 0;
  private inFlight: Promise<void> = Promise.resolve();

  constructor(private readonly countBatch: CountBatch) {}

  /** Takes a text; its index stands for its tokens. */
  readonly add = (text: string): number => {
    this.gathered.push(text);
    this.chars += text.length;
    if (this.chars >= BATCH_CHARS || this.gathered.length >= BATCH_TEXTS) this.seal();
    return this.added++;
  };

  full(): boolean {
    return this.ready.length > 0;
  }

  /** Sends the batches gathered, each after the one before is answered (and a turn of the loop). */
  async send(): Promise<void> {
    for (let batch = this.ready.shift(); batch; batch = this.ready.shift()) {
      await this.inFlight;
      await yieldToLoop();
      const from = this.sent;
      this.sent += batch.length;
      const answer = this.countBatch(batch).then((counts) => {
        for (let i = 0; i < counts.length; i++) this.tokens[from + i] = counts[i]!;
      });
      // A failure is the report's, once awaited: never an unhandled rejection meanwhile.
      answer.catch(() => undefined);
      this.inFlight = answer;
    }
  }

  async all(): Promise<number[]> {
    this.seal();
    await this.send();
    await this.inFlight;
    return this.tokens;
  }

  private seal(): void {
    if (this.gathered.length > 0) this.ready.push(this.gathered);
    this.gathered = [];
    this.chars = 0;
  }
}
