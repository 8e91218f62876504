/**
 * Readers never follow links. Another user who can write to a log folder (or who planted a link where a
 * log was expected) must not make tail, stats, check, diff, export, `ui DIR` or verify-log read a file of
 * their choosing: a FILE that is a symbolic link is refused, a link in a folder is skipped with a note, and a
 * folder other users can write to gets a warning.
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { checkCommand } from "../../src/cli/check-command.js";
import { diffCommand } from "../../src/cli/diff-command.js";
import { exportCommand } from "../../src/cli/har/command.js";
import { statsCommand } from "../../src/cli/stats-command.js";
import { tailCommand } from "../../src/cli/tail/command.js";
import { verifyLogCommand } from "../../src/cli/verify-log.js";
import { exportOtlpCommand } from "../../src/otel/offline-export.js";
import { exportHtml } from "../../src/ui/server/html-export.js";
import { newestLaunchLog } from "../../src/stdio/log-folder.js";
import { resolveLogInputs } from "../../src/ui/server/log-files.js";
import { capturedIo } from "../helpers/captured-io.js";

const record = (tool: string): string =>
  `${JSON.stringify({ level: "info", time: "2026-11-28T00:00:00.000Z", event: "rpc", flow: "f", transport: "streamable-http", server: "s:1", path: "/mcp", session: null, protocolVersion: null, direction: "client_to_server", kind: "request", id: 1, method: "tools/call", tool, bytes: 10, decision: { action: "allow", enforced: false, rules: [] } })}\n`;

const io = capturedIo;

let dir: string;
let logs: string;
let planted: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), "mcp-wiretap-links-"));
  logs = path.join(dir, "logs");
  planted = path.join(dir, "elsewhere.ndjson");
  writeFileSync(planted, record("planted_secret"), { mode: 0o600 });
  mkdirSync(logs, { mode: 0o700 });
  writeFileSync(path.join(logs, "a.ndjson"), record("real_tool"), { mode: 0o600 });
  symlinkSync(planted, path.join(logs, "b.ndjson"));
  symlinkSync(planted, path.join(dir, "link.ndjson"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("a FILE that is a symbolic link is refused", () => {
  it.each([
    ["tail", (f: string, x: ReturnType<typeof io>["io"]) => tailCommand(f, {}, x)],
    ["stats", (f: string, x: ReturnType<typeof io>["io"]) => statsCommand([f], {}, x)],
    ["check", (f: string, x: ReturnType<typeof io>["io"]) => checkCommand([f], {}, x)],
    ["diff", (f: string, x: ReturnType<typeof io>["io"]) => diffCommand(f, path.join(logs, "a.ndjson"), {}, x)],
    ["export --har", (f: string, x: ReturnType<typeof io>["io"]) => exportCommand(f, { har: path.join(dir, "out.har") }, x)],
    ["export --html", (f: string, x: ReturnType<typeof io>["io"]) => exportHtml([f], path.join(dir, "out.html"), {}, x)],
    ["export --otlp", (f: string, x: ReturnType<typeof io>["io"]) => exportOtlpCommand([f], { otlp: path.join(dir, "out.json") }, "0.0.0", x)],
  ])("%s", async (_name, run) => {
    const { out, io: x } = io();
    const code = await run(path.join(dir, "link.ndjson"), x);
    expect(code).not.toBe(0);
    expect(out.stdout).not.toContain("planted_secret");
    expect(out.stderr).toContain("is a symbolic link");
  });

  it("verify-log", () => {
    expect(() => verifyLogCommand([path.join(dir, "link.ndjson")], { caDir: path.join(dir, "ca") })).toThrow(/is a symbolic link/);
  });
});

describe("a link inside a log folder is skipped, with a note", () => {
  it("stats reads the folder's own logs, and says it skipped the link", async () => {
    const { out, io: x } = io();
    expect(await statsCommand([logs], { json: true }, x)).toBe(0);
    expect(out.stdout).toContain("real_tool");
    expect(out.stdout).not.toContain("planted_secret");
    expect(out.stderr).toContain(`${path.join(logs, "b.ndjson")} is a symbolic link: skipped`);
  });

  it("ui DIR lists the folder's own logs only, and says it skipped the link", async () => {
    const notes: string[] = [];
    const inputs = await resolveLogInputs([logs], (n) => notes.push(n));
    expect(inputs.map((i) => path.basename(i.file))).toEqual(["a.ndjson"]);
    expect(notes.join("\n")).toContain("b.ndjson is a symbolic link: skipped");
  });

  it("tail --stdio-logs never takes a link for the newest launch's log", () => {
    const launches = path.join(dir, "stdio");
    mkdirSync(launches, { mode: 0o700 });
    writeFileSync(path.join(launches, "20261128T000000Z-server-1.ndjson"), record("real_tool"), { mode: 0o600 });
    symlinkSync(planted, path.join(launches, "20261128T000001Z-server-2.ndjson"));
    const later = new Date(Date.now() + 60_000);
    utimesSync(planted, later, later);
    expect(newestLaunchLog(launches)).toBe(path.join(launches, "20261128T000000Z-server-1.ndjson"));
  });

  it("a folder other users can write to gets a warning", async () => {
    chmodSync(logs, 0o777);
    const { out, io: x } = io();
    await statsCommand([logs], {}, x);
    expect(out.stderr).toMatch(/warning: other users can write to the log folder .* \(mode 0?777\)/);
  });
});
