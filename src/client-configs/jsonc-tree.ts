/**
 * Reads JSON with comments and trailing commas (VS Code's `mcp.json`, and what people leave in the others)
 * into a tree that knows where every value and key sits in the text, so an edit can replace exactly one
 * value and leave every other byte as it was.
 *
 * Hand-written because the usual library for this (jsonc-parser) is not a dependency of the project yet; it
 * reads only what JSON and JSONC allow and refuses everything else with the line it stopped at.
 */

export type JsonNode =
  | { kind: "object"; start: number; end: number; props: JsonProp[] }
  | { kind: "array"; start: number; end: number; items: JsonNode[] }
  | { kind: "string"; start: number; end: number; value: string }
  | { kind: "scalar"; start: number; end: number; value: number | boolean | null };

export interface JsonProp {
  key: string;
  keyStart: number;
  value: JsonNode;
}

export class JsoncError extends Error {}

const MAX_DEPTH = 256;

export function parseJsonc(text: string): JsonNode {
  const p = new Reader(text);
  p.skip();
  const node = p.value(0);
  p.skip();
  if (p.at < text.length) p.fail("more text after the end of the document");
  return node;
}

/** The plain value of a node, as JSON.parse would give it (the last of duplicate keys wins, as there). */
export function plainValue(node: JsonNode): unknown {
  switch (node.kind) {
    case "object": {
      const out: Record<string, unknown> = {};
      for (const prop of node.props) Object.defineProperty(out, prop.key, { value: plainValue(prop.value), enumerable: true, writable: true, configurable: true });
      return out;
    }
    case "array":
      return node.items.map(plainValue);
    default:
      return node.value;
  }
}

/** The property of an object node by key, or undefined; "duplicate" when the key appears more than once. */
export function propOf(node: JsonNode, key: string): JsonProp | "duplicate" | undefined {
  if (node.kind !== "object") return undefined;
  const found = node.props.filter((prop) => prop.key === key);
  if (found.length > 1) return "duplicate";
  return found[0];
}

class Reader {
  at = 0;
  constructor(private readonly text: string) {}

  fail(what: string): never {
    const line = this.text.slice(0, this.at).split("\n").length;
    throw new JsoncError(`line ${line}: ${what}`);
  }

  /** Whitespace and comments. */
  skip(): void {
    const t = this.text;
    while (this.at < t.length) {
      const c = t[this.at];
      if (c === " " || c === "\t" || c === "\n" || c === "\r" || c === "\uFEFF") this.at++;
      else if (t.startsWith("//", this.at)) {
        const nl = t.indexOf("\n", this.at);
        this.at = nl < 0 ? t.length : nl;
      } else if (t.startsWith("/*", this.at)) {
        const close = t.indexOf("*/", this.at + 2);
        if (close < 0) this.fail("a comment that never ends");
        this.at = close + 2;
      } else return;
    }
  }

  value(depth: number): JsonNode {
    if (depth > MAX_DEPTH) this.fail("nested too deeply");
    const c = this.text[this.at];
    if (c === "{") return this.object(depth);
    if (c === "[") return this.array(depth);
    if (c === '"') return this.string();
    const m = /^(?:true|false|null|-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?)/.exec(this.text.slice(this.at, this.at + 400));
    if (!m) this.fail(c === undefined ? "the document ends too early" : `unexpected ${JSON.stringify(c)}`);
    const start = this.at;
    this.at += m[0].length;
    return { kind: "scalar", start, end: this.at, value: JSON.parse(m[0]) as number | boolean | null };
  }

  private string(): JsonNode & { kind: "string" } {
    const start = this.at;
    const t = this.text;
    let i = start + 1;
    for (;;) {
      const c = t[i];
      if (c === undefined || c === "\n") this.fail("a string that never ends");
      if (c === "\\") i += 2;
      else if (c === '"') break;
      else i++;
    }
    this.at = i + 1;
    try {
      return { kind: "string", start, end: this.at, value: JSON.parse(t.slice(start, this.at)) as string };
    } catch {
      return this.fail("a string with a bad escape or control character");
    }
  }

  private object(depth: number): JsonNode {
    const start = this.at++;
    const props: JsonProp[] = [];
    for (;;) {
      this.skip();
      if (this.text[this.at] === "}") break;
      if (this.text[this.at] !== '"') this.fail("expected a property name in double quotes");
      const key = this.string();
      this.skip();
      if (this.text[this.at] !== ":") this.fail("expected ':' after a property name");
      this.at++;
      this.skip();
      props.push({ key: key.value, keyStart: key.start, value: this.value(depth + 1) });
      this.skip();
      if (this.text[this.at] === ",") this.at++;
      else if (this.text[this.at] !== "}") this.fail("expected ',' or '}'");
    }
    this.at++;
    return { kind: "object", start, end: this.at, props };
  }

  private array(depth: number): JsonNode {
    const start = this.at++;
    const items: JsonNode[] = [];
    for (;;) {
      this.skip();
      if (this.text[this.at] === "]") break;
      items.push(this.value(depth + 1));
      this.skip();
      if (this.text[this.at] === ",") this.at++;
      else if (this.text[this.at] !== "]") this.fail("expected ',' or ']'");
    }
    this.at++;
    return { kind: "array", start, end: this.at, items };
  }
}
