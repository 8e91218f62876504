/**
 * Record types the usual runs never write, made for real where a setup can provoke them (an old CA, a UI
 * port in use) and otherwise from the builders the code writes them with (a decoder that throws, an
 * engine error below the log level), each parsed with its schema.
 */
import { rmSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { loadOrCreateCa } from "../../src/ca/authority.js";
import { stdioLineErrorRecord } from "../../src/records/lifecycle-records.js";
import { proxyRecord } from "../../src/records/proxy-records.js";
import { startTestProxy } from "../helpers/proxy-harness.js";
import { connectStdio, records, SCRIPTED_STDIO, tempDir } from "../helpers/stdio-shim.js";
import { expectRecordsMatchSchemas } from "./expect-records.js";

const DAY = 24 * 60 * 60 * 1000;
const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

describe("rare records parse with their schemas", () => {
  it("a CA that expires within 30 days: the proxy starts with a ca_warning naming it", async () => {
    const dir = tempDir("mcp-wiretap-old-ca-");
    cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
    const old = await loadOrCreateCa(dir, { now: () => Date.now() - 3640 * DAY });
    const proxy = await startTestProxy({ caDir: dir });
    const all = await proxy.stop("test");
    const warning = all.find((r) => r.event === "ca_warning");
    expect(warning).toMatchObject({ level: "warn" });
    expect(String(warning!.message)).toContain(old.certPath);
    expectRecordsMatchSchemas(all, "ca_warning", "start", "stop");
  });

  it("stdio --ui with its port taken: a ui_error, and the relay goes on", async () => {
    const dir = tempDir();
    cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    cleanup.push(() => new Promise<void>((resolve) => taken.close(() => resolve())));
    const port = (taken.address() as net.AddressInfo).port;
    const logFile = path.join(dir, "log.ndjson");
    const run = await connectStdio([SCRIPTED_STDIO], { logFile, args: ["--ui-port", String(port)] });
    const answer = await run.client.callTool({ name: "echo", arguments: { message: "no UI needed" } });
    await run.close();
    expect(JSON.stringify(answer)).toContain("Echo: no UI needed");
    const all = await records(logFile);
    const uiError = all.find((r) => r.event === "ui_error");
    expect(uiError).toMatchObject({ level: "warn" });
    expect(String(uiError!.message)).toContain(String(port));
    expectRecordsMatchSchemas(all, "ui_error", "start", "rpc", "stop");
  });

  it("addon_error (of the proxy and of a stdio line) and engine_error, as their builders write them", () => {
    const written = (level: string, record: Record<string, unknown>) => ({ level, time: new Date(0).toISOString(), ...record });
    const addon = proxyRecord({ type: "addon_error", addon: "mcp", hook: "responseHeaders", err: "TypeError: x is undefined" });
    const engine = proxyRecord({ type: "engine_error", kind: "onError", err: "Error: socket hang up" });
    const line = stdioLineErrorRecord("stdio:x", "s-1", "server_to_client", new Error("pins.json: EACCES"));
    expectRecordsMatchSchemas([written(addon.level, addon.record), written(engine.level, engine.record), written("error", line)], "addon_error", "engine_error");
    // Each shape is its own: a stdio line error without its launch is no record of either.
    const { server: _server, ...withoutServer } = line;
    expect(() => expectRecordsMatchSchemas([written("error", withoutServer)])).toThrow();
  });
});
