/** What wrap refuses to do, and what it keeps, around the edit itself. */
import { existsSync, lstatSync, readFileSync, readdirSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { ClientId } from "../../src/client-configs/clients.js";
import { parseJsonc, plainValue } from "../../src/client-configs/jsonc-tree.js";
import { runWrap } from "../../src/client-configs/run-wrap.js";
import { readTomlValue, scanToml } from "../../src/client-configs/toml-scan.js";
import { tempDir } from "../helpers/stdio-shim.js";

const LAUNCHER = { command: "/opt/node", prefix: ["/opt/w/dist/cli/main.js"] };

async function wrap(file: string, client: ClientId, state: string, action: "wrap" | "unwrap" = "wrap", servers: string[] = [], launcher = LAUNCHER): Promise<{ code: number; out: string }> {
  const lines: string[] = [];
  const code = await runWrap(
    { action, servers, client, config: file, dryRun: false, launcher, stateDir: state, platform: { platform: "linux", env: {}, home: "/nowhere", cwd: "/" } },
    (l) => lines.push(l),
  );
  return { code, out: lines.join("\n") };
}

function place(name: string, text: string | Buffer): { dir: string; file: string; state: string } {
  const dir = tempDir("mcp-wiretap-wrap-safe-");
  const file = path.join(dir, name);
  writeFileSync(file, text);
  return { dir, file, state: path.join(dir, "state") };
}

const CONFIG = '{\n  "mcpServers": {\n    "a": { "command": "srv-a" },\n    "b": { "command": "srv-b" }\n  }\n}\n';

describe("safe edits", () => {
  it("entries wrapped with node options before the main script (what wrap writes) are known again: rewrapping changes nothing, unwrap restores the bytes", async () => {
    const flagged = { command: "/opt/node", prefix: ["--max-semi-space-size=1", "/opt/w/dist/cli/main.js"] };
    const { file, state } = place("mcp.json", CONFIG);
    await wrap(file, "cursor", state, "wrap", [], flagged);
    const wrapped = readFileSync(file, "utf8");
    expect(wrapped).toContain('"--max-semi-space-size=1", "/opt/w/dist/cli/main.js", "stdio", "--name", "a", "--", "srv-a"');
    await wrap(file, "cursor", state, "wrap", [], flagged);
    expect(readFileSync(file, "utf8")).toBe(wrapped);
    await wrap(file, "cursor", state, "unwrap");
    expect(readFileSync(file, "utf8")).toBe(CONFIG);
  });

  it("a JSONC file with a byte-order mark and comments: wrapped and unwrapped byte for byte", async () => {
    const text = '\uFEFF// servers\n{\n  "servers": {\n    /* the one */ "a": { "command": "srv-a", "args": ["x",], },\n  },\n}\n';
    const { file, state } = place("mcp.json", text);
    const r = await wrap(file, "vscode", state);
    expect(r.code).toBe(0);
    expect(readFileSync(file, "utf8")).toContain('/* the one */ "a": { "command": "/opt/node"');
    await wrap(file, "vscode", state, "unwrap");
    expect(readFileSync(file, "utf8")).toBe(text);
  });

  it("a config that is our own symbolic link (dotfiles) is edited where it points; the link stays", async () => {
    const { dir, file: real, state } = place("real.json", CONFIG);
    const link = path.join(dir, "mcp.json");
    symlinkSync(real, link);
    const r = await wrap(link, "cursor", state);
    expect(r.out).toContain(`-> ${real}: changed`);
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readFileSync(real, "utf8")).toContain('"command": "/opt/node"');
    await wrap(link, "cursor", state, "unwrap");
    expect(readFileSync(real, "utf8")).toBe(CONFIG);
  });

  it("a link planted where the backup goes: refused, the config untouched, nothing written through the link", async () => {
    const { dir, file, state } = place("mcp.json", CONFIG);
    const target = path.join(dir, "elsewhere");
    symlinkSync(target, file + ".mcp-wiretap-backup");
    const r = await wrap(file, "cursor", state);
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/symbolic link, where the backup goes: nothing written/);
    expect(readFileSync(file, "utf8")).toBe(CONFIG);
    expect(existsSync(target)).toBe(false);
  });

  it("not UTF-8, or not JSON: refused with why, nothing written, no backup", async () => {
    const latin = place("mcp.json", Buffer.concat([Buffer.from(CONFIG.slice(0, 10)), Buffer.from([0xe9]), Buffer.from(CONFIG.slice(10))]));
    const r1 = await wrap(latin.file, "cursor", latin.state);
    expect(r1.code).toBe(1);
    expect(r1.out).toContain("not UTF-8 text: left alone");
    expect(readdirSync(latin.dir)).toEqual(["mcp.json"]);

    const broken = place("mcp.json", '{\n  "mcpServers": {\n    "a": { "command": "x" \n  }\n');
    const r2 = await wrap(broken.file, "cursor", broken.state);
    expect(r2.code).toBe(1);
    expect(r2.out).toMatch(/cannot be read as JSON \(line \d+: .*\): left alone/);
    expect(readdirSync(broken.dir)).toEqual(["mcp.json"]);
  });

  it("the backup is written once: a later wrap after other changes keeps the first one", async () => {
    const { file, state } = place("mcp.json", CONFIG);
    await wrap(file, "cursor", state, "wrap", ["a"]);
    const edited = readFileSync(file, "utf8").replace('"b": {', '"b": { "env": {},');
    writeFileSync(file, edited);
    await wrap(file, "cursor", state, "wrap", ["b"]);
    expect(readFileSync(file + ".mcp-wiretap-backup", "utf8")).toBe(CONFIG);
    // The state that lets unwrap restore bytes is private.
    const stateFiles = readdirSync(path.join(state, "wrapped"));
    expect(stateFiles).toHaveLength(1);
    expect(statSync(path.join(state, "wrapped", stateFiles[0]!)).mode & 0o777).toBe(0o600);
    expect(statSync(path.join(state, "wrapped")).mode & 0o777).toBe(0o700);
    await wrap(file, "cursor", state, "unwrap");
    expect(readFileSync(file, "utf8")).toBe(CONFIG.replace('"b": {', '"b": { "env": {},'));
    // Not the text the backup holds: the backup stays.
    expect(existsSync(file + ".mcp-wiretap-backup")).toBe(true);
  });

  it("CRLF line ends, in JSON and in TOML, round-trip", async () => {
    const json = place("mcp.json", CONFIG.replace(/\n/g, "\r\n"));
    await wrap(json.file, "cursor", json.state);
    expect(readFileSync(json.file, "utf8")).not.toMatch(/[^\r]\n/);
    await wrap(json.file, "cursor", json.state, "unwrap");
    expect(readFileSync(json.file, "utf8")).toBe(CONFIG.replace(/\n/g, "\r\n"));

    const text = '[mcp_servers.x]\r\ncommand = "srv"\r\n\r\n[mcp_servers.y]\r\ncommand = "other"\r\nargs = [\r\n  "a",\r\n]\r\n';
    const toml = place("config.toml", text);
    await wrap(toml.file, "codex", toml.state);
    const wrapped = readFileSync(toml.file, "utf8");
    expect(wrapped).not.toMatch(/[^\r]\n/);
    expect(wrapped).toContain('args = ["/opt/w/dist/cli/main.js", "stdio", "--name", "x", "--", "srv"]\r\n');
    await wrap(toml.file, "codex", toml.state, "unwrap");
    expect(readFileSync(toml.file, "utf8")).toBe(text);
  });
});

describe("the readers", () => {
  it("JSONC: any JSON document reads as JSON.parse reads it, comments or not", () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.boolean(), (value, commented) => {
        let text = JSON.stringify(value, null, 2);
        if (commented) text = `// head\n${text.replace(/\n/g, " /* c */\n")}\n/* tail */`;
        expect(plainValue(parseJsonc(text))).toEqual(JSON.parse(JSON.stringify(value)));
      }),
      { numRuns: 200 },
    );
  });

  it("JSONC: what JSON forbids is refused", () => {
    for (const bad of ["{", '{"a" 1}', "[1,,2]", '{"a":1}}', "'x'", '"\\q"', '"a\nb"', "01", "/* open"]) expect(() => parseJsonc(bad), bad).toThrow(/line \d+/);
  });

  it("TOML: strings of every form, comments and lookalikes in strings", () => {
    const text = [
      'a = "x # not a comment" # a comment',
      "b = 'C:\\path\\x'",
      'c = ["\\u00e9", \'lit\', """multi',
      '[not.a.table]',
      '""", 1979-05-27 07:32:00Z]',
      "d = { e = [1, 2], f = { g = 'h' } }",
    ].join("\n");
    const s = scanToml(text);
    expect(s.map((x) => (x.kind === "kv" ? x.key.join(".") : `[${x.path.join(".")}]`))).toEqual(["a", "b", "c", "d"]);
    const value = (i: number) => {
      const kv = s[i]! as { valueStart: number; valueEnd: number };
      return readTomlValue(text.slice(kv.valueStart, kv.valueEnd));
    };
    expect(value(0)).toEqual({ kind: "string", value: "x # not a comment" });
    expect(value(1)).toEqual({ kind: "string", value: "C:\\path\\x" });
    expect(value(2)).toEqual({ kind: "other" });
    expect(() => scanToml('a = "open')).toThrow(/line 1/);
    expect(() => scanToml("a = 1 2")).toThrow(/line 1/);
  });
});
