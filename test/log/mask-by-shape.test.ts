/**
 * maskByShape, the one walker behind the record guard (copy-on-write, memoised scans) and the masking beneath a
 * payload member whose name held a secret: compared with the two walkers it replaced, and on deep input.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ExchangeSecrets } from "../../src/log/exchange-secrets.js";
import { maskByShape } from "../../src/log/mask-by-shape.js";
import { guardRecord } from "../../src/log/record-guard.js";
import { maskAtPointers } from "../../src/log/redact.js";
import { defineMember, isPlainObject } from "../../src/log/redact/members.js";
import { maskShapedText, maskShapedTextOnce } from "../../src/log/shaped-secrets.js";

// Built at run time so that no complete key sits in the source.
const TOKEN = ["ghp_", "k3Jx9QvT2mLw8RbN4cYh6ZpD1sFa7GeU5oVi"].join("");
const KEY = ["AKIA", "J5TR8PQ2WX7M4K9B"].join("");
const AWS_SECRET = ["wJalrXUtnFEMI/K7MDENG/", "bPxRfiCYzEXAMPLEKE"].join(""); // 40 characters: a secret under its member's name
const TOKEN_MASK = "[redacted: github_token]";
const KEY_MASK = "[redacted: aws_access_key_id]";

// ---- The two walkers this one replaced, as they were (reference behaviour). ----

/** record-guard.ts: copy-on-write, recursive, unmasked past depth 64. */
function oldGuardMask(value: unknown, depth = 0, memberName?: string): unknown {
  if (typeof value === "string") return maskShapedTextOnce(value, memberName);
  if (typeof value !== "object" || value === null || depth > 64) return value;
  if (Array.isArray(value)) {
    let copy: unknown[] | null = null;
    for (let i = 0; i < value.length; i++) {
      const clean = oldGuardMask(value[i], depth + 1);
      if (clean !== value[i]) (copy ??= value.slice())[i] = clean;
    }
    return copy ?? value;
  }
  let copy: Record<string, unknown> | null = null;
  let renamed = false;
  for (const name of Object.keys(value)) {
    const member = (value as Record<string, unknown>)[name];
    const clean = oldGuardMask(member, depth + 1, name);
    const cleanName = oldGuardMask(name, depth + 1);
    if (clean === member && cleanName === name) continue;
    if (cleanName !== name) renamed = true;
    if (copy === null) {
      copy = {};
      for (const k of Object.keys(value)) defineMember(copy, k, (value as Record<string, unknown>)[k]);
    }
    defineMember(copy, name, clean);
  }
  if (copy === null || !renamed) return copy ?? value;
  const out: Record<string, unknown> = {};
  for (const name of Object.keys(copy)) {
    let clean = oldGuardMask(name) as string;
    for (let n = 2; clean !== name && Object.hasOwn(out, clean); n++) clean = `${oldGuardMask(name) as string} #${n}`;
    defineMember(out, clean, copy[name]);
  }
  return out;
}

/** json-body.ts: in place, iterative. */
function oldMaskSecretNames(holder: Record<string, unknown>, deep: boolean): void {
  const names = Object.keys(holder);
  const masked = names.map((name) => maskShapedText(name));
  if (masked.every((m, i) => m === names[i])) return;
  const taken = new Set(names.filter((name, i) => masked[i] === name));
  const entries = names.map((name, i) => {
    let clean = masked[i]!;
    if (clean !== name) {
      for (let n = 2; taken.has(clean); n++) clean = `${masked[i]!} #${n}`;
      taken.add(clean);
    }
    return { clean, value: clean !== name && deep ? oldMaskShapes(holder[name]) : holder[name] };
  });
  for (const name of names) delete holder[name];
  for (const { clean, value } of entries) defineMember(holder, clean, value);
}

function oldMaskShapes(root: unknown): unknown {
  if (typeof root === "string") return maskShapedText(root);
  const stack: unknown[] = [root];
  const seen = new Set<object>();
  while (stack.length > 0) {
    const node = stack.pop();
    if (typeof node !== "object" || node === null || seen.has(node)) continue;
    seen.add(node);
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) {
        const item: unknown = node[i];
        if (typeof item === "string") node[i] = maskShapedText(item);
        else stack.push(item);
      }
      continue;
    }
    if (!isPlainObject(node)) continue;
    oldMaskSecretNames(node, false);
    for (const name of Object.keys(node)) {
      const member = node[name];
      if (typeof member === "string") defineMember(node, name, maskShapedText(member, name));
      else stack.push(member);
    }
  }
  return root;
}

// ---- Random JSON with secrets in values, inside texts, and as member names. ----

const secretText = fc.constantFrom(TOKEN, KEY, `see ${KEY} here`, `Bearer ${TOKEN}`, `${TOKEN}x`);
const text = fc.oneof({ weight: 3, arbitrary: fc.string({ maxLength: 16 }) }, { weight: 1, arbitrary: secretText }, { weight: 1, arbitrary: fc.constant(AWS_SECRET) });
const name = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom("a", "b", "note", "aws_secret_access_key", "__proto__", "0", "headers") },
  { weight: 1, arbitrary: fc.string({ maxLength: 6 }) },
  { weight: 2, arbitrary: secretText },
);
/** Members as JSON text (so that `__proto__` is an own member, as JSON.parse makes it). */
const json = fc.letrec<{ node: string }>((tie) => ({
  node: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    text.map((s) => JSON.stringify(s)),
    fc.constantFrom("1", "null", "true", "-2.5"),
    fc.array(tie("node"), { maxLength: 4 }).map((items) => `[${items.join(",")}]`),
    fc.array(fc.tuple(name, tie("node")), { maxLength: 5 }).map((members) => `{${members.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(",")}}`),
  ),
})).node;
const jsonObject = fc.array(fc.tuple(name, json), { maxLength: 6 }).map((members) => `{${members.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(",")}}`);

/** Every string and member name in `value`, walked without recursion (JSON.stringify overflows past ~10,000 levels). */
function texts(value: unknown): string[] {
  const out: string[] = [];
  for (const stack = [value]; stack.length > 0; ) {
    const node = stack.pop();
    if (typeof node === "string") out.push(node);
    else if (typeof node === "object" && node !== null) {
      for (const [k, v] of Object.entries(node)) {
        if (!Array.isArray(node)) out.push(k);
        stack.push(v);
      }
    }
  }
  return out;
}
const leaks = (value: unknown) => texts(value).filter((t) => t.includes(TOKEN) || t.includes(KEY));

/** Same members, values and order, `__proto__` included. */
const same = (actual: unknown, expected: unknown) => {
  expect(JSON.stringify(actual)).toBe(JSON.stringify(expected));
  expect(actual).toEqual(expected);
};

describe("maskByShape", () => {
  it("masks as the record guard's walker did (memoised scans), copying only what changed, the input untouched", () => {
    fc.assert(
      fc.property(json, fc.constantFrom(undefined, "note", "aws_secret_access_key"), (source, memberName) => {
        const value: unknown = JSON.parse(source);
        const expected = oldGuardMask(JSON.parse(source), 0, memberName);
        const out = maskByShape(value, maskShapedTextOnce, memberName);
        same(out, expected);
        same(value, JSON.parse(source)); // nothing given is modified
        if (JSON.stringify(expected) === source) expect(out).toBe(value); // nothing masked: the same object
      }),
      { numRuns: 400 },
    );
  });

  it("masks as the payload's walker did beneath a member whose name held a secret, in place of the holder only", () => {
    fc.assert(
      fc.property(jsonObject, (source) => {
        const holder = JSON.parse(source) as Record<string, unknown>;
        const members = Object.values(holder).map((member) => [member, JSON.stringify(member)] as const);
        const expected = JSON.parse(source) as Record<string, unknown>;
        oldMaskSecretNames(expected, true);
        // A flagged member name: the detector's pointer ends with the `<redacted>` segment.
        expect(maskAtPointers(holder, [{ pointer: "/<redacted>", what: "github_token" }])).toBe(holder);
        same(holder, expected);
        for (const [member, before] of members) expect(JSON.stringify(member)).toBe(before); // members beneath: copied, not modified
      }),
      { numRuns: 400 },
    );
  });

  it("also equals the payload's walker on whole values (unmemoised scans)", () => {
    fc.assert(
      fc.property(json, (source) => same(maskByShape(JSON.parse(source), maskShapedText), oldMaskShapes(JSON.parse(source)))),
      { numRuns: 300 },
    );
  });

  it("numbers names that mask alike, and never loses a member to a name already taken (the guard's walker lost one to a later literal \"[redacted: …]\" name)", () => {
    const value = JSON.parse(`{"${TOKEN}":1,"${TOKEN}x":2,"${TOKEN_MASK}":3,"__proto__":{"${KEY}":"${KEY}"}}`) as unknown;
    same(maskByShape(value, maskShapedTextOnce), JSON.parse(`{"${TOKEN_MASK} #2":1,"${TOKEN_MASK} #3":2,"${TOKEN_MASK}":3,"__proto__":{"${KEY_MASK}":"${KEY_MASK}"}}`));
  });

  for (const depth of [65, 300, 20_000]) {
    it(`masks a secret ${depth.toLocaleString("en")} levels deep, in arrays and objects, with either scan`, () => {
      let inner: unknown = { [TOKEN]: `see ${KEY}` };
      for (let i = 0; i < depth; i++) inner = i % 2 === 0 ? [1, inner] : { a: "ok", b: inner };
      for (const mask of [maskShapedTextOnce, maskShapedText]) {
        const found = texts(maskByShape(inner, mask));
        expect(leaks(found)).toEqual([]);
        expect(found).toEqual(expect.arrayContaining([TOKEN_MASK, KEY_MASK]));
      }
      // Nothing to mask that deep: the same object back.
      let clean: unknown = { a: "plain" };
      for (let i = 0; i < depth; i++) clean = [clean];
      expect(maskByShape(clean, maskShapedTextOnce)).toBe(clean);
    });
  }

  it("the record guard masks past the old cap of 64 levels, and the payload path past 10,000", () => {
    let deep: unknown = `token ${TOKEN}`;
    for (let i = 0; i < 12_000; i++) deep = { next: deep };
    const record = guardRecord({ event: "http", flow: "f", body: deep }, new ExchangeSecrets());
    expect(leaks(record)).toEqual([]);
    expect(texts(record)).toContain(TOKEN_MASK);
    const payload = { [KEY]: deep, kept: deep };
    maskAtPointers(payload, [{ pointer: "/<redacted>", what: "aws_access_key_id" }]);
    expect(Object.keys(payload)).toEqual([KEY_MASK, "kept"]);
    expect(leaks(payload[KEY_MASK as keyof typeof payload])).toEqual([]);
    expect(payload.kept).toBe(deep); // not beneath the secret name: left to the detector's pointers
  });

  it("ends on a cycle, shallow or past the tracked depth, leaving it as it is", () => {
    const loop: Record<string, unknown> = { note: `see ${KEY}` };
    loop.self = loop;
    loop.list = [loop, loop];
    const out = maskByShape(loop, maskShapedTextOnce) as Record<string, unknown>;
    expect(out.note).toBe(KEY_MASK);
    let long: Record<string, unknown> = { secret: TOKEN };
    const head = long;
    for (let i = 0; i < 200; i++) long = long.next = { secret: TOKEN, other: [head] };
    long.next = head;
    expect((maskByShape(head, maskShapedText) as Record<string, unknown>).secret).toBe(TOKEN_MASK);
  });

  it("after a scan throws, the next walk starts clean (no frame left in use)", () => {
    let deep: unknown = "x".repeat(20);
    for (let i = 0; i < 100; i++) deep = [deep];
    expect(() => maskByShape(deep, () => { throw new Error("scan failed"); })).toThrow("scan failed");
    same(maskByShape({ a: [TOKEN] }, maskShapedText), { a: [TOKEN_MASK] });
  });
});
