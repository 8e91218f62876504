/** What a replay needs of a transport: send a request and read its answer, send a notification, end. */
export type Message = Record<string, unknown>;

export interface Answer {
  /** The response or error that answers the request. */
  message: Message;
  /** What came before it on the way: progress, logging, server requests (answered with an error). */
  others: Message[];
}

export interface Channel {
  request(message: Message): Promise<Answer>;
  notify(message: Message): Promise<void>;
  /** Ends the session (Streamable HTTP: DELETE; legacy: the stream closed; stdio: stdin closed). */
  close(): Promise<void>;
}

/** A failure of the exchange itself (no answer to show), said so the user knows what to change. */
export class ReplayError extends Error {}

/** Answer to a request the server sends its client during a replay: a replay has nobody to ask. */
export function refuseServerRequest(request: Message): Message {
  return { jsonrpc: "2.0", id: request.id, error: { code: -32601, message: "a replay by mcp-wiretap does not answer server requests" } };
}

/** Whether `m` answers the request with `id`. */
export function answers(m: Message, id: unknown): boolean {
  return m.id === id && (Object.hasOwn(m, "result") || Object.hasOwn(m, "error")) && !Object.hasOwn(m, "method");
}

export function isServerRequest(m: Message): boolean {
  return typeof m.method === "string" && m.id !== undefined && m.id !== null;
}

/** The JSON messages of one text: an object, or a batch (array) of them. */
export function messagesOf(text: string): Message[] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return [];
  }
  const list = Array.isArray(value) ? value : [value];
  return list.filter((m): m is Message => m !== null && typeof m === "object" && !Array.isArray(m));
}

/**
 * The one request a channel that reads answers from a stream (legacy SSE, stdio) waits for: each message
 * read is the answer, or something that came before it (a server request among them is refused).
 */
export class AnswerWaiter {
  private waiting: { id: unknown; others: Message[]; resolve(a: Answer): void; reject(e: Error): void } | null = null;
  private ended: Error | null = null;

  constructor(private readonly refuse: (reply: Message) => void) {}

  /** The answer to request `id`, within `timeoutMs`. */
  wait(id: unknown, what: string, timeoutMs: number): Promise<Answer> {
    if (this.ended) return Promise.reject(this.ended);
    return new Promise<Answer>((resolve, reject) => {
      const timer = setTimeout(() => this.fail(new ReplayError(`no answer to ${what} within ${timeoutMs} ms`)), timeoutMs);
      this.waiting = {
        id,
        others: [],
        resolve: (a) => (clearTimeout(timer), resolve(a)),
        reject: (e) => (clearTimeout(timer), reject(e)),
      };
    });
  }

  deliver(m: Message): void {
    const w = this.waiting;
    if (w && answers(m, w.id)) {
      this.waiting = null;
      w.resolve({ message: m, others: w.others });
      return;
    }
    w?.others.push(m);
    if (isServerRequest(m)) this.refuse(refuseServerRequest(m));
  }

  /** No answer will come: the waiting request (and any later one) fails with `err`. */
  fail(err: Error): void {
    this.ended ??= err;
    this.waiting?.reject(err);
    this.waiting = null;
  }

  /** The request failed on its own (its POST refused); later requests may still be answered. */
  reject(err: Error): void {
    this.waiting?.reject(err);
    this.waiting = null;
  }
}
