/**
 * Reads a TOML document (Codex's `config.toml`) as a list of statements — table headers and key/value
 * lines — each with where it sits in the text, so that one value can be replaced and every other byte
 * (comments, order, spacing) kept. Values are skipped over, not interpreted, except strings and arrays of
 * strings, which is all a server's `command` and `args` are.
 *
 * Hand-written because no TOML library that keeps the text is a dependency of the project yet. It follows
 * TOML 1.0 for what it skips (the four string forms, arrays and inline tables across lines, comments) and
 * refuses what it does not understand with the line it stopped at, so a document it misreads is never edited.
 */

export type TomlStatement =
  | { kind: "table"; path: string[]; array: boolean; start: number; end: number }
  | { kind: "kv"; table: string[]; key: string[]; start: number; valueStart: number; valueEnd: number; end: number };

export type TomlValue = { kind: "string"; value: string } | { kind: "strings"; value: string[] } | { kind: "other" };

export class TomlError extends Error {}

const MAX_DEPTH = 128;

export function scanToml(text: string): TomlStatement[] {
  const s = new Scanner(text);
  const out: TomlStatement[] = [];
  let table: string[] = [];
  for (;;) {
    s.skipBlank(true);
    if (s.at >= text.length) return out;
    const start = s.lineStart();
    if (text[s.at] === "[") {
      const array = text[s.at + 1] === "[";
      s.at += array ? 2 : 1;
      const path = s.key("]");
      if (!text.startsWith(array ? "]]" : "]", s.at)) s.fail("expected ']' after a table name");
      s.at += array ? 2 : 1;
      s.endOfLine();
      table = path;
      out.push({ kind: "table", path, array, start, end: s.at });
    } else {
      const key = s.key("=");
      if (text[s.at] !== "=") s.fail("expected '=' after a key");
      s.at++;
      s.skipBlank(false);
      const valueStart = s.at;
      s.value(0);
      const valueEnd = s.at;
      s.endOfLine();
      out.push({ kind: "kv", table, key, start, valueStart, valueEnd, end: s.at });
    }
  }
}

/** A value's text read as a single-line string or an array of them; anything else is "other". */
export function readTomlValue(text: string): TomlValue {
  const s = new Scanner(text);
  const one = s.singleLineString();
  if (one !== undefined) return s.at === text.length ? { kind: "string", value: one } : { kind: "other" };
  if (text[0] !== "[") return { kind: "other" };
  s.at = 1;
  const items: string[] = [];
  for (;;) {
    s.skipBlank(true);
    if (text[s.at] === "]") break;
    const item = s.singleLineString();
    if (item === undefined) return { kind: "other" };
    items.push(item);
    s.skipBlank(true);
    if (text[s.at] === ",") s.at++;
    else if (text[s.at] !== "]") return { kind: "other" };
  }
  return s.at + 1 === text.length ? { kind: "strings", value: items } : { kind: "other" };
}

/** A string as a TOML basic string (JSON's escapes are a subset of TOML's, minus the ones TOML lacks). */
export function tomlString(value: string): string {
  return JSON.stringify(value).replace(/\u2028/g, "\\u2028").replace(/\u2029/g, "\\u2029").replace(/\u007f/g, "\\u007F");
}

class Scanner {
  at = 0;
  constructor(private readonly text: string) {}

  fail(what: string): never {
    throw new TomlError(`line ${this.text.slice(0, this.at).split("\n").length}: ${what}`);
  }

  lineStart(): number {
    return this.text.lastIndexOf("\n", this.at - 1) + 1;
  }

  /** Spaces and tabs; with `lines`, also newlines and comments. */
  skipBlank(lines: boolean): void {
    const t = this.text;
    while (this.at < t.length) {
      const c = t[this.at];
      if (c === " " || c === "\t" || c === "\uFEFF") this.at++;
      else if (lines && (c === "\n" || c === "\r")) this.at++;
      else if (lines && c === "#") this.toNewline();
      else return;
    }
  }

  private toNewline(): void {
    const nl = this.text.indexOf("\n", this.at);
    this.at = nl < 0 ? this.text.length : nl;
  }

  /** After a statement: blanks, an optional comment, then a newline (taken) or the end. */
  endOfLine(): void {
    this.skipBlank(false);
    if (this.text[this.at] === "#") this.toNewline();
    if (this.text.startsWith("\r\n", this.at)) this.at += 2;
    else if (this.text[this.at] === "\n") this.at++;
    else if (this.at < this.text.length) this.fail("unexpected text after a value");
  }

  /** A dotted key up to `stop` (not taken). */
  key(stop: string): string[] {
    const parts: string[] = [];
    for (;;) {
      this.skipBlank(false);
      const quoted = this.singleLineString();
      if (quoted !== undefined) parts.push(quoted);
      else {
        const m = /^[A-Za-z0-9_-]+/.exec(this.text.slice(this.at, this.at + 1024));
        if (!m) this.fail("expected a key");
        parts.push(m[0]);
        this.at += m[0].length;
      }
      this.skipBlank(false);
      if (this.text[this.at] === ".") this.at++;
      else if (this.text[this.at] === stop) return parts;
      else this.fail(`expected '.' or '${stop}' in a key`);
    }
  }

  /** A basic or literal string on one line, decoded; undefined (nothing taken) if none starts here. */
  singleLineString(): string | undefined {
    const t = this.text;
    const q = t[this.at];
    if ((q !== '"' && q !== "'") || t.startsWith(q.repeat(3), this.at)) return undefined;
    let i = this.at + 1;
    while (i < t.length && t[i] !== q && t[i] !== "\n") i += q === '"' && t[i] === "\\" ? 2 : 1;
    if (t[i] !== q) this.fail("a string that never ends");
    const raw = t.slice(this.at + 1, i);
    this.at = i + 1;
    return q === "'" ? raw : decodeBasic(raw, () => this.fail("a bad escape in a string"));
  }

  value(depth: number): void {
    if (depth > MAX_DEPTH) this.fail("nested too deeply");
    const t = this.text;
    const c = t[this.at];
    if (c === '"' || c === "'") {
      if (this.singleLineString() !== undefined) return;
      let close = this.at + 3;
      while (close < t.length && !t.startsWith(c.repeat(3), close)) close += c === '"' && t[close] === "\\" ? 2 : 1;
      if (close >= t.length) this.fail("a multi-line string that never ends");
      this.at = close + 3;
      while (t[this.at] === c && this.at < close + 5) this.at++; // up to two quotes may end the content
      return;
    }
    if (c === "[" || c === "{") {
      const end = c === "[" ? "]" : "}";
      this.at++;
      for (;;) {
        this.skipBlank(true);
        if (t[this.at] === end) break;
        if (c === "{") {
          this.key("=");
          this.at++;
          this.skipBlank(false);
        }
        this.value(depth + 1);
        this.skipBlank(true);
        if (t[this.at] === ",") this.at++;
        else if (t[this.at] !== end) this.fail(`expected ',' or '${end}'`);
      }
      this.at++;
      return;
    }
    // A number, boolean or date-time; a date and a time may be separated by one space.
    const m = /^(?:\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}[^\s,\]}#]*|[^\s,\]}#]+)/.exec(t.slice(this.at, this.at + 256));
    if (!m) this.fail("expected a value");
    this.at += m[0].length;
  }
}

function decodeBasic(raw: string, fail: () => never): string {
  return raw.replace(/\\(?:u([0-9A-Fa-f]{4})|U([0-9A-Fa-f]{8})|(.))/g, (_, u4?: string, u8?: string, c?: string) => {
    if (u4 ?? u8) {
      const code = parseInt((u4 ?? u8)!, 16);
      if (code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) fail();
      return String.fromCodePoint(code);
    }
    const plain: Record<string, string> = { b: "\b", t: "\t", n: "\n", f: "\f", r: "\r", e: "\x1b", '"': '"', "\\": "\\" };
    return plain[c!] ?? fail();
  });
}
