/** stdio from the replay's side: one JSON-RPC message a line each way. */
import { LineSplitter } from "../saved-logs/reader.js";
import { AnswerWaiter, messagesOf, ReplayError, type Answer, type Channel, type Message } from "./channel.js";
import { MAX_STREAM_BYTES } from "./sse-events.js";

export class StdioChannel implements Channel {
  private readonly lines = new LineSplitter();
  private readonly waiter: AnswerWaiter;
  private seen = 0;

  constructor(
    private readonly send: (line: string) => void,
    private readonly end: () => void,
    private readonly timeoutMs: number,
  ) {
    this.waiter = new AnswerWaiter((reply) => this.send(JSON.stringify(reply) + "\n"));
  }

  /** What the server wrote (after the tap: in enforce mode only what was judged). */
  data(chunk: Buffer): void {
    this.seen += chunk.length;
    if (this.seen > MAX_STREAM_BYTES) return this.waiter.fail(new ReplayError(`the server wrote more than ${MAX_STREAM_BYTES} bytes without the answer`));
    for (const line of this.lines.push(chunk)) for (const m of messagesOf(line)) this.waiter.deliver(m);
  }

  /** The server is gone. */
  closed(reason: string): void {
    this.waiter.fail(new ReplayError(`the server ${reason} before answering`));
  }

  request(message: Message): Promise<Answer> {
    const answer = this.waiter.wait(message.id, String(message.method), this.timeoutMs);
    this.send(JSON.stringify(message) + "\n");
    return answer;
  }

  async notify(message: Message): Promise<void> {
    this.send(JSON.stringify(message) + "\n");
  }

  async close(): Promise<void> {
    this.end();
  }
}
