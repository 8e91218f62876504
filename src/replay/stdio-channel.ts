/** stdio from the replay's side: one JSON-RPC message a line each way. */
import { LineSplitter } from "../saved-logs/reader.js";
import { answers, isServerRequest, messagesOf, ReplayError, refuseServerRequest, type Answer, type Channel, type Message } from "./channel.js";
import { MAX_STREAM_BYTES } from "./sse-events.js";

interface Waiter {
  id: unknown;
  others: Message[];
  resolve(answer: Answer): void;
  reject(err: Error): void;
}

export class StdioChannel implements Channel {
  private readonly lines = new LineSplitter();
  private waiter: Waiter | null = null;
  private ended: Error | null = null;
  private seen = 0;

  constructor(
    private readonly send: (line: string) => void,
    private readonly end: () => void,
    private readonly timeoutMs: number,
  ) {}

  /** What the server wrote (after the tap: in enforce mode only what was judged). */
  data(chunk: Buffer): void {
    this.seen += chunk.length;
    if (this.seen > MAX_STREAM_BYTES) return this.fail(new ReplayError(`the server wrote more than ${MAX_STREAM_BYTES} bytes without the answer`));
    for (const line of this.lines.push(chunk)) for (const m of messagesOf(line)) this.deliver(m);
  }

  /** The server is gone. */
  closed(reason: string): void {
    this.fail(new ReplayError(`the server ${reason} before answering`));
  }

  request(message: Message): Promise<Answer> {
    if (this.ended) return Promise.reject(this.ended);
    const answer = new Promise<Answer>((resolve, reject) => {
      const timer = setTimeout(() => this.fail(new ReplayError(`no answer to ${String(message.method)} within ${this.timeoutMs} ms`)), this.timeoutMs);
      const done = (): void => clearTimeout(timer);
      this.waiter = { id: message.id, others: [], resolve: (a) => (done(), resolve(a)), reject: (e) => (done(), reject(e)) };
    });
    this.send(JSON.stringify(message) + "\n");
    return answer;
  }

  async notify(message: Message): Promise<void> {
    this.send(JSON.stringify(message) + "\n");
  }

  async close(): Promise<void> {
    this.end();
  }

  private fail(err: Error): void {
    this.ended ??= err;
    this.waiter?.reject(err);
    this.waiter = null;
  }

  private deliver(m: Message): void {
    const w = this.waiter;
    if (w && answers(m, w.id)) {
      this.waiter = null;
      w.resolve({ message: m, others: w.others });
      return;
    }
    w?.others.push(m);
    if (isServerRequest(m)) this.send(JSON.stringify(refuseServerRequest(m)) + "\n");
  }
}
