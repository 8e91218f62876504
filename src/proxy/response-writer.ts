import type http from "node:http";
import type { TapFanOut } from "./addon-chain.js";
import type { ExchangeRecord } from "./exchange-record.js";
import { endToEndRawHeaders } from "./headers.js";
import { SseFramer } from "./sse-framer.js";
import { OrderedOutput } from "./ordered-output.js";
import { tapForwarded } from "./body-taps.js";
import { ChunkSizes, coalesced } from "./coalesce.js";
import { GrowingBuffer } from "../budget/growing-buffer.js";
import { charged } from "./scheduled-reads.js";

/**
 * Sends the upstream response to the client: unchanged (the default, and always in monitor mode), or
 * through the exchange's rewriter (enforcement).
 */
export function sendResponse(ex: ExchangeRecord, upRes: http.IncomingMessage, res: http.ServerResponse, taps: TapFanOut): void {
  const head = ex.response!;
  const rewriter = ex.responseRewriter;
  /** `sent`: the chunk was already written to the client (piped), and is flushed before the taps' work. */
  const tapBody = (sent?: () => void): void => tapForwarded(upRes, taps, (n) => (ex.responseBytes += n), sent);
  if (!rewriter) {
    res.writeHead(head.status, head.statusMessage, endToEndRawHeaders(upRes.rawHeaders));
    // A body of known length follows its head at once: they go out together. Anything else (an event stream,
    // a chunked body) may stay silent for long: its head goes out now.
    if (upRes.headers["content-length"] === undefined) sendHeadNow(res);
    upRes.on("end", () => {
      if (upRes.rawTrailers.length > 0 && res.chunkedEncoding) res.addTrailers(pairs(upRes.rawTrailers));
    });
    // Piped first, tapped second: each chunk is on its way to the client before decoding, policy and
    // logging look at it, so they never delay it. (node:http corks the socket until the next tick after a
    // write; uncorking sends the chunk now instead of after the taps' work.) Tiny chunks are joined first.
    const body = coalesced(upRes, ex.readGate, ex.responseRead);
    body.pipe(res);
    tapForwarded(body, taps, (n) => (ex.responseBytes += n), () => res.socket?.uncork());
    body.on("end", () => charged(ex.responseRead, () => taps.end()));
    return;
  }
  tapBody();
  if (rewriter.kind === "whole") {
    sendWhole(ex, upRes, res, rewriter, taps);
  } else {
    sendEvents(ex, upRes, res, rewriter, taps);
  }
}

function sendWhole(
  ex: ExchangeRecord,
  upRes: http.IncomingMessage,
  res: http.ServerResponse,
  rewriter: Extract<NonNullable<ExchangeRecord["responseRewriter"]>, { kind: "whole" }>,
  taps: TapFanOut,
): void {
  const head = ex.response!;
  // One growing buffer, charged to the inspection budget: never an object per chunk.
  const kept = new GrowingBuffer(rewriter.charge, rewriter.maxBytes + 1);
  let passedThrough = false;
  const read = ex.responseRead;
  const sizes = new ChunkSizes();
  const onData = (chunk: Buffer): void =>
    charged(read, () => {
      sizes.add(chunk);
      if (!kept.append(chunk)) replaceUnheld("over_budget", chunk);
      else if (kept.length > rewriter.maxBytes) replaceUnheld("too_large");
    });
  // Held while its server's turn is paused (read-scheduler.ts; not a body in tiny chunks: coalesce.ts), until
  // the body is whole or passed through.
  const flowControl = (): void => void (passedThrough ? undefined : ChunkSizes.readable(ex.readGate, read.turn?.gate, sizes) ? upRes.resume() : upRes.pause());
  /**
   * Too large to hold, no room in the budget (`unkept`: the chunk that found none), or refused on its head:
   * the rewriter says what goes out instead (fail closed), or it passes unchanged.
   */
  const replaceUnheld = (why?: "too_large" | "over_budget", unkept?: Buffer): void => {
    passedThrough = true;
    upRes.off("data", onData);
    upRes.pause();
    if (unkept) {
      // Passed on unchanged, should the rewriter let it: what was kept, then this chunk, then the rest.
      const held = Buffer.concat([kept.view(), unkept]);
      kept.clear();
      pending = held;
    }
    void Promise.resolve()
      .then(() => rewriter.rewrite(null, why))
      .then(
        (out) => (out ? replaceOversized(out) : passOn()),
        () => replaceOversized(null),
      );
  };
  let pending: Buffer | null = null;
  const passOn = (): void => {
    const held = pending ?? kept.view();
    pending = null;
    kept.clear();
    if (res.destroyed) return;
    res.writeHead(head.status, head.statusMessage, endToEndRawHeaders(upRes.rawHeaders));
    res.write(held);
    upRes.pipe(res);
    upRes.resume();
  };
  /** The upstream's body is not sent: `out` (JSON) goes instead, or a 502 when even that could not be made. */
  const replaceOversized = (out: Buffer | null): void => {
    pending = null;
    kept.clear();
    upRes.destroy();
    taps.end();
    if (res.destroyed) return;
    const body = out ?? Buffer.from("mcp-wiretap: the response could not be judged (internal error); not passed on\n");
    const type = out ? "application/json" : "text/plain; charset=utf-8";
    const headers = endToEndRawHeaders(upRes.rawHeaders, undefined, ["content-length", "content-encoding", "content-type"]);
    res.writeHead(out ? head.status : 502, out ? head.statusMessage : "Bad Gateway", [...headers, "content-type", type, "content-length", String(body.length)]);
    res.end(body);
  };
  // The taps end before the rewriter runs: a tap may undo the body's content coding for it (see
  // decoded-body.ts), and the rewriter waits for that.
  const onEnd = async (): Promise<void> => {
    taps.end();
    if (passedThrough) return;
    const body = kept.view();
    let out: Buffer | null = null;
    try {
      out = await rewriter.rewrite(body);
    } catch {
      kept.clear();
      // A body that could not be judged is not passed on.
      if (res.destroyed) return;
      const text = Buffer.from("mcp-wiretap: the response could not be judged (internal error); not passed on\n");
      res.writeHead(502, "Bad Gateway", { "content-type": "text/plain; charset=utf-8", "content-length": String(text.length) });
      res.end(text);
      return;
    }
    kept.clear();
    if (res.destroyed) return;
    // A replacement is UTF-8 JSON as it stands, whatever coding or charset the upstream's body was labelled with.
    const replaced = out ? ["content-encoding", "content-type"] : [];
    const headers = endToEndRawHeaders(upRes.rawHeaders, undefined, ["content-length", ...replaced]);
    const final = out ?? body;
    const type = out ? ["content-type", "application/json"] : [];
    res.writeHead(head.status, head.statusMessage, [...headers, ...type, "content-length", String(final.length)]);
    res.end(final);
  };
  upRes.on("error", () => res.destroy());
  // A response cut off (either side) leaves nothing held (nor charged).
  res.once("close", () => kept.clear());
  if (rewriter.now) return replaceUnheld();
  res.once("close", read.gate.watch(flowControl));
  upRes.on("data", onData);
  upRes.on("end", () => void charged(read, () => void onEnd()));
  flowControl();
}

function sendEvents(
  ex: ExchangeRecord,
  upRes: http.IncomingMessage,
  res: http.ServerResponse,
  rewriter: Extract<NonNullable<ExchangeRecord["responseRewriter"]>, { kind: "events" }>,
  taps: TapFanOut,
): void {
  const head = ex.response!;
  // Events may change size: the body can no longer keep a content-length. A decoded stream is sent as identity.
  const dropped = rewriter.decode ? ["content-length", "content-encoding"] : ["content-length"];
  res.writeHead(head.status, head.statusMessage, endToEndRawHeaders(upRes.rawHeaders, undefined, dropped));
  sendHeadNow(res);
  // The upstream is paused while the client's socket is full, an event's judgement is awaited, or what waits
  // behind judgements passed its budget (the exchange's read gate).
  let draining = false;
  let held = false;
  const read = ex.responseRead;
  const sizes = new ChunkSizes();
  const flowControl = (): void => void (draining || held || !ChunkSizes.readable(ex.readGate, read.turn?.gate, sizes) ? upRes.pause() : upRes.resume());
  res.once("close", read.gate.watch(flowControl));
  const write = (raw: Buffer): void => {
    if (raw.length > 0 && !res.write(raw) && !draining) {
      draining = true;
      flowControl();
      res.once("drain", () => {
        draining = false;
        flowControl();
      });
    }
  };
  // Once an event could not be judged, nothing more of the upstream's stream is passed on.
  let broken = false;
  const out = new OrderedOutput(
    write,
    (h) => {
      held = h;
      flowControl();
    },
    () => (broken = true),
  );
  const queued: Buffer[] = [];
  const drainQueue = (): void => {
    while (queued.length > 0) out.push(queued.shift()!);
  };
  const judged = (raw: Buffer): Buffer | Promise<Buffer> => {
    if (broken) return Buffer.alloc(0);
    try {
      return rewriter.event(raw);
    } catch {
      broken = true;
      return Buffer.alloc(0);
    }
  };
  const framer = new SseFramer(
    (raw) => {
      out.push(judged(raw));
      drainQueue();
    },
    rewriter.maxEventBytes,
    // An event too large to judge: passed on as it comes, unless the rewriter replaces it (enforce mode).
    (raw) => !broken && !rewriter.oversizedEnd && out.push(raw),
    (why) => {
      try {
        rewriter.oversized?.(why);
      } catch {
        broken = true; // what could not be recorded is not passed on
      }
    },
    // The stream ended mid-event: a reader that dispatches what it has at the end would read this tail as an
    // event, so it is judged as one (closed by a blank line); passed on as received unless it was denied.
    (raw) => {
      const closed = Buffer.concat([raw, Buffer.from("\n\n")]);
      const judgedTail = judged(closed);
      const sent = (o: Buffer): Buffer => (o === closed ? raw : o);
      out.push(judgedTail instanceof Promise ? judgedTail.then(sent) : sent(judgedTail));
    },
    () => {
      if (broken || !rewriter.oversizedEnd) return;
      try {
        out.push(rewriter.oversizedEnd());
      } catch {
        broken = true;
      }
    },
    rewriter.charge,
  );
  res.once("close", () => framer.release());
  ex.injectNow = (raw) => {
    queued.push(raw);
    if (!framer.midEvent) drainQueue();
  };
  for (const raw of ex.injected.splice(0)) ex.injectNow(raw);
  const finish = (): void => {
    framer.flush();
    drainQueue();
    out.then(() => {
      taps.end();
      ex.injectNow = null;
      res.end();
    });
  };
  if (!rewriter.decode) {
    upRes.on("data", (chunk: Buffer) =>
      charged(read, () => {
        sizes.add(chunk);
        framer.push(chunk);
      }),
    );
    upRes.on("end", () => charged(read, finish));
    // Listening for `data` started the upstream: a gate closed already (paused from the start) holds it.
    flowControl();
    return;
  }
  // Decoding may finish after the upstream's end (zlib is asynchronous), or before it (a broken stream). An
  // upstream cut off mid-stream is not ended cleanly here: the forwarder fails the exchange.
  let cut = false;
  const decoder = rewriter.decode({ data: (chunk) => charged(read, () => framer.push(chunk)), end: () => !cut && finish() });
  upRes.on("data", (chunk: Buffer) =>
    charged(read, () => {
      sizes.add(chunk);
      decoder.data(chunk);
    }),
  );
  upRes.on("end", () => charged(read, () => decoder.end()));
  flowControl();
  upRes.on("close", () => {
    if (upRes.complete) return;
    cut = true;
    decoder.abort?.({ code: "upstream_reset", message: "response ended before it was complete" });
  });
}

function pairs(raw: readonly string[]): [string, string][] {
  const out: [string, string][] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) out.push([raw[i]!, raw[i + 1]!]);
  return out;
}

/**
 * Sends the head before any body. Not flushHeaders(): node writes the head as UTF-8 there, so a header byte past
 * ASCII (read, judged and recorded as latin-1) would reach the client re-encoded; with an empty Buffer it goes
 * out as received. (A response that may have no body ignores the write: its head goes with its end.)
 */
function sendHeadNow(res: http.ServerResponse): void {
  res.write(Buffer.alloc(0));
}
