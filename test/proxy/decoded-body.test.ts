import zlib from "node:zlib";
import { afterEach, describe, expect, it, vi } from "vitest";
import { decodedBody, type DecodedEnd } from "../../src/proxy/decoded-body.js";
import type { BodyTap, Exchange } from "../../src/proxy/exchange.js";

/** Just enough of an exchange for a decoded-body source: its notes, its response head and its taps. */
function exchange(contentEncoding: string | undefined): { ex: Exchange; taps: BodyTap[] } {
  const taps: BodyTap[] = [];
  const headers = contentEncoding ? { "content-encoding": contentEncoding } : {};
  const ex = { notes: new Map(), request: { headers }, response: { headers }, tapRequest: (t: BodyTap) => taps.push(t), tapResponse: (t: BodyTap) => taps.push(t) } as unknown as Exchange;
  return { ex, taps };
}

function reader(limit: number): { sub: { limit: number; data(c: Buffer): void; end(o: DecodedEnd): void }; result: Promise<{ text: string; outcome: DecodedEnd }> } {
  const chunks: Buffer[] = [];
  let resolve!: (v: { text: string; outcome: DecodedEnd }) => void;
  const result = new Promise<{ text: string; outcome: DecodedEnd }>((r) => (resolve = r));
  return { sub: { limit, data: (c) => chunks.push(c), end: (outcome) => resolve({ text: Buffer.concat(chunks).toString(), outcome }) }, result };
}

afterEach(() => vi.restoreAllMocks());

describe("decodedBody", () => {
  it("decodes a gzip'd body once for every subscriber, each up to its own limit", async () => {
    const gunzips = vi.spyOn(zlib, "createGunzip");
    const { ex, taps } = exchange("gzip");
    const big = reader(1000);
    const small = reader(4);
    decodedBody(ex, "response").subscribe(big.sub);
    decodedBody(ex, "response").subscribe(small.sub);
    expect(taps).toHaveLength(1);
    const body = zlib.gzipSync("0123456789");
    taps[0]!.data(body.subarray(0, 5));
    taps[0]!.data(body.subarray(5));
    taps[0]!.end();
    expect(await big.result).toEqual({ text: "0123456789", outcome: { problem: null, aborted: false } });
    expect(await small.result).toEqual({ text: "0123", outcome: { problem: { code: "decode_limit", message: expect.stringContaining("exceeds 4 bytes") }, aborted: false } });
    expect(gunzips).toHaveBeenCalledTimes(1);
  });

  it("reports a coding that does not decode, an unknown coding and a cut-off body to each subscriber", async () => {
    for (const [coding, body, code] of [
      ["gzip", Buffer.from("not gzip"), "decode_error"],
      ["x-foo", Buffer.from("{}"), "unsupported_encoding"],
    ] as const) {
      const { ex, taps } = exchange(coding);
      const a = reader(100);
      decodedBody(ex, "request").subscribe(a.sub);
      taps[0]!.data(body);
      taps[0]!.end();
      expect((await a.result).outcome.problem?.code).toBe(code);
    }
    const { ex, taps } = exchange(undefined);
    const a = reader(100);
    decodedBody(ex, "request").subscribe(a.sub);
    taps[0]!.data(Buffer.from("{\"a\""));
    taps[0]!.abort?.({ code: "client_aborted", message: "gone" });
    expect(await a.result).toEqual({ text: '{"a"', outcome: { problem: null, aborted: true } });
  });

  it("refuses a subscriber that comes after the body began, and keeps a throwing one from the others", async () => {
    const { ex, taps } = exchange(undefined);
    const thrower = { limit: 10, data: () => { throw new Error("boom"); }, end: vi.fn() };
    const good = reader(10);
    decodedBody(ex, "response").subscribe(thrower);
    decodedBody(ex, "response").subscribe(good.sub);
    taps[0]!.data(Buffer.from("abc"));
    const late = reader(10);
    decodedBody(ex, "response").subscribe(late.sub);
    taps[0]!.end();
    expect((await late.result).outcome.problem).toMatchObject({ code: "decoder_failed", message: "subscribed after the body began" });
    expect(await good.result).toEqual({ text: "abc", outcome: { problem: null, aborted: false } });
    expect(thrower.end).toHaveBeenCalledWith({ problem: expect.objectContaining({ code: "decoder_failed" }), aborted: false });
  });
});

describe("decodedBody, a body larger as sent than every subscriber reads", () => {
  it("stops decoding it", async () => {
    const { ex, taps } = exchange("gzip");
    const a = reader(1 << 20);
    decodedBody(ex, "response").subscribe({ ...a.sub, maxRawBytes: 10 });
    const body = zlib.gzipSync(Buffer.alloc(100_000, "x"), { level: 0 });
    for (let i = 0; i < body.length; i += 1000) taps[0]!.data(body.subarray(i, i + 1000));
    taps[0]!.end();
    const { text, outcome } = await a.result;
    expect(outcome.problem).toMatchObject({ code: "decode_limit", message: "body exceeds 10 bytes as sent; not decoded" });
    expect(text.length).toBeLessThan(100_000);
  });
});
