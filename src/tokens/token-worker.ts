/**
 * Token counts in a worker thread, for a process that may be the proxy (the web UI's server): loading the
 * `o200k_base` tables takes a pause of some hundreds of ms, and counting one large text a pause of its own,
 * neither of which the proxy's event loop may take. The thread starts on the first batch, answers batches in
 * order, and is ended when idle for `idleMs` or on `close()`; it never keeps the process alive while idle.
 * If it cannot start or stops, every batch asked of it fails with the reason: nothing is counted in-thread.
 */
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import type { CountBatch } from "./token-counter.js";

/** How long an idle thread (and its tables, some tens of MB) is kept for the next ask. */
const IDLE_MS = 60_000;

/**
 * The thread's code, given as text (`eval`), so the CLI bundle needs no worker file of its own: it imports
 * the tokenizer by the URL the main thread resolved from its own place (src/ or the bundle in dist/cli/).
 */
const WORKER_BODY = `
const { parentPort, workerData } = require("node:worker_threads");
import(workerData.tokenizer).then(({ countTokens }) => {
  parentPort.on("message", (texts) => {
    let counts;
    try { counts = texts.map((t) => countTokens(t)); } catch (err) { counts = { error: String(err && err.message || err) }; }
    parentPort.postMessage(counts);
  });
});
`;

type Answer = number[] | { error: string };

interface Asked {
  resolve(counts: number[]): void;
  reject(err: Error): void;
}

export interface TokenWorkerOptions {
  idleMs?: number;
  /** The module whose `countTokens` counts (by default gpt-tokenizer's `o200k_base`). */
  tokenizerUrl?: string;
}

export class TokenWorker {
  private worker: Worker | null = null;
  /** Batches sent and not yet answered, in the order sent (the thread answers in that order). */
  private readonly asked: Asked[] = [];
  private idle: NodeJS.Timeout | null = null;
  /** Closed for good (its UI server closed): a late ask fails rather than start another thread. */
  private closed = false;
  private readonly idleMs: number;
  private readonly tokenizerUrl: string | undefined;

  constructor(opts: TokenWorkerOptions = {}) {
    this.idleMs = opts.idleMs ?? IDLE_MS;
    this.tokenizerUrl = opts.tokenizerUrl;
  }

  /** The tokens of each text, counted in the thread. */
  readonly count: CountBatch = (texts) =>
    new Promise<number[]>((resolve, reject) => {
      if (this.closed) return reject(new Error("the token counter was closed"));
      let worker: Worker;
      try {
        worker = this.worker ?? this.start();
      } catch (err) {
        return reject(new Error(`the token counter could not start: ${(err as Error).message}`));
      }
      if (this.idle) clearTimeout(this.idle);
      this.idle = null;
      this.asked.push({ resolve, reject });
      // Held alive while it owes an answer, never while idle.
      worker.ref();
      worker.postMessage(texts);
    });

  /** Whether a thread is running (for tests and the idle check). */
  get running(): boolean {
    return this.worker !== null;
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.retire();
  }

  /** Ends the thread (idle, or closing); the next ask, unless closed, starts another. */
  private async retire(): Promise<void> {
    const worker = this.worker;
    this.stopped(new Error("the token counter was closed"));
    if (worker) await worker.terminate();
  }

  private start(): Worker {
    const tokenizer = this.tokenizerUrl ?? pathToFileURL(createRequire(import.meta.url).resolve("gpt-tokenizer/encoding/o200k_base")).href;
    const worker = new Worker(WORKER_BODY, { eval: true, workerData: { tokenizer }, name: "mcp-wiretap tokens" });
    worker.unref();
    worker.on("message", (answer: Answer) => {
      // A late answer of a thread already replaced owes nothing to the new one's asks.
      if (this.worker !== worker) return;
      const next = this.asked.shift();
      if (Array.isArray(answer)) next?.resolve(answer);
      else next?.reject(new Error(`token count failed: ${answer.error}`));
      if (this.asked.length === 0) {
        worker.unref();
        this.idle = setTimeout(() => void this.retire(), this.idleMs).unref();
      }
    });
    worker.on("error", (err) => this.worker === worker && this.stopped(new Error(`the token counter stopped: ${err.message}`)));
    worker.on("exit", (code) => this.worker === worker && this.stopped(new Error(`the token counter stopped (exit code ${code})`)));
    this.worker = worker;
    return worker;
  }

  /** The thread is gone: what it owed fails with why; the next ask starts another. */
  private stopped(reason: Error): void {
    this.worker = null;
    if (this.idle) clearTimeout(this.idle);
    this.idle = null;
    for (const a of this.asked.splice(0)) a.reject(reason);
  }
}
