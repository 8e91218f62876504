/**
 * `mcp-wiretap demo`: a scripted session between the demo's own client and server (demo-tools.ts) through
 * the proxy over HTTPS, then through `mcp-wiretap stdio`, in enforce mode: progress, a secret in an argument
 * (redacted in the records), a poisoned tool description (flagged) and a call the policy denies. Loopback
 * only, offline; its CA, pins and policy live in a temporary folder removed at the end; what it leaves is
 * the two logs it names, in the per-user folder `mcp-wiretap ui` and `tail --stdio-logs` read.
 */
import { spawn } from "node:child_process";
import { closeSync, existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { loadOrCreateCa } from "../ca/authority.js";
import { LeafIssuer } from "../ca/leaf-issuer.js";
import { PACKAGE_ROOT } from "../util/package-info.js";
import { startProxy } from "../cli/start.js";
import { openLaunchLog, stdioLogFolder } from "../stdio/log-folder.js";
import { httpsClient, stdioClient, type DemoClient } from "./demo-clients.js";
import { DENIED_TOOL, POISONED_TOOL, type JsonRpc } from "./demo-tools.js";
import { startDemoHttps } from "./https-server.js";
import { RecordPrinter } from "./record-printer.js";

export interface DemoOptions {
  /** Where the logs go; default the per-user stdio log folder. */
  logDir?: string;
  color: boolean;
  /** Keep the proxy and its UI up until this resolves (Enter on a terminal). */
  hold?: () => Promise<void>;
}

const POLICY = `# mcp-wiretap demo: block one tool, flag what the detectors find
mode: enforce
default: allow
rules:
  - name: no-mass-delete
    action: deny
    reason: the demo forbids deleting everything
    match: { method: tools/call, tool: ${DENIED_TOOL} }
detectors: { secrets: flag, pii: flag, hiddenText: flag, poisoning: flag, toolPinning: flag, schema: flag }
`;

/** A token of GitHub's shape, made up here: what a client might pass a tool by mistake. */
export const DEMO_SECRET = ["ghp", "_", "R7kQ2mX9vT4pL8wZ3nB6yH1cF5jD0sA2eG7u"].join("");

export async function runDemo(o: DemoOptions, out: (line: string) => void): Promise<number> {
  const tmp = mkdtempSync(path.join(os.tmpdir(), "mcp-wiretap-demo-"));
  const cleanups: Array<() => Promise<void> | void> = [() => rmSync(tmp, { recursive: true, force: true })];
  try {
    const dir = o.logDir ?? stdioLogFolder();
    const logs = [openLaunchLog(dir, "demo-https"), openLaunchLog(dir, "demo-stdio")].map((l) => (closeSync(l.fd), l.file)) as [string, string];
    const policy = path.join(tmp, "policy.yaml");
    writeFileSync(policy, POLICY, { mode: 0o600 });
    const printer = new RecordPrinter(o.color, out);
    const caDir = path.join(tmp, "ca");
    const ca = await loadOrCreateCa(caDir);
    // The demo server's certificate comes from the same CA, which the proxy is told to trust upstream.
    const issuer = await LeafIssuer.create(ca);
    const server = await startDemoHttps({ key: issuer.keyPem, cert: issuer.certificateFor("127.0.0.1").certPem });
    cleanups.unshift(() => server.close());
    const proxy = await startProxy({ host: "127.0.0.1", port: 0, caDir, logFile: logs[0], config: policy, upstreamCa: [ca.certPath], insecureUpstream: false, passthrough: [], graceMs: 500, banner: false, uiPort: 0 });
    cleanups.unshift(() => proxy.stop("demo over"));
    out(`mcp-wiretap demo: a client and a server talk through the proxy (enforce mode), over HTTPS and then over stdio.`);
    out(`  UI: ${proxy.uiUrl ?? "(not served)"}`);
    out(`  logs: ${logs[0]}`);
    out(`        ${logs[1]}`);
    out("");
    out(`── HTTPS: ${server.url} through http://127.0.0.1:${proxy.address.port}`);
    const https = httpsClient(server.url, `http://127.0.0.1:${proxy.address.port}`, ca.certPem);
    await session(https, out, () => printer.print(logs[0]));
    await https.close();

    out("");
    out("── stdio: mcp-wiretap stdio -- the demo server");
    const child = spawn(process.execPath, [path.join(PACKAGE_ROOT, "dist", "cli", "main.js"), "stdio", "--name", "demo", "--log-file", logs[1], "--ca-dir", path.join(tmp, "pins"), "--config", policy, "--", process.execPath, demoServerFile()], {
      stdio: ["pipe", "pipe", "pipe"],
    });
    child.stderr.resume();
    const stdio = stdioClient(child);
    await session(stdio, out, () => printer.print(logs[1]));
    await stdio.close();
    printer.print(logs[1]);
    if (o.hold) {
      out("");
      out(`The UI stays up at ${proxy.uiUrl ?? "(not served)"} until you press Enter.`);
      await o.hold();
    }
    await proxy.stop("demo over");
    printer.print(logs[0]);
    out("");
    out(`Done. The records: mcp-wiretap tail ${logs[0]}   (or mcp-wiretap ui, which shows every log of ${dir})`);
    return 0;
  } finally {
    for (const c of cleanups) await c();
  }
}

/** The scripted session, the records of each step printed as they are written. */
async function session(client: DemoClient, out: (line: string) => void, print: () => void): Promise<void> {
  const step = async (what: string, call: () => Promise<{ before: JsonRpc[]; reply: JsonRpc } | void>): Promise<void> => {
    out(`▸ ${what}`);
    const r = await call();
    if (r) {
      for (const m of r.before) if (m.method === "notifications/progress") out(`    progress: ${JSON.stringify((m.params as { message?: string }).message)}`);
      out(r.reply.error ? `    error: ${JSON.stringify((r.reply.error as { message?: string }).message)}` : "    answered");
    }
    await settle();
    print();
  };
  await step("initialize", () => client.request("initialize", { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "mcp-wiretap-demo-client", version: "1.0.0" } }));
  await step("notifications/initialized", () => client.notify("notifications/initialized"));
  await step(`tools/list (${POISONED_TOOL}'s description tells the model to read ~/.ssh/id_rsa: flagged)`, () => client.request("tools/list"));
  await step("tools/call search_docs with progress, and a token in its arguments (redacted in the records)", () =>
    client.request("tools/call", { name: "search_docs", arguments: { query: "rotate keys", api_key: DEMO_SECRET }, _meta: { progressToken: "search-1" } }),
  );
  await step(`tools/call ${DENIED_TOOL} (denied by the policy: the server never sees it)`, () => client.request("tools/call", { name: DENIED_TOOL, arguments: {} }));
}

/** Records are written in batches: a moment for the last ones to reach the file. */
function settle(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 150));
}

/** The demo server's file: beside the bundle (dist/cli/demo-server.js) or beside this module (dist/demo/). */
function demoServerFile(): string {
  const here = fileURLToPath(new URL("./demo-server.js", import.meta.url));
  return existsSync(here) ? here : path.join(PACKAGE_ROOT, "dist", "demo", "demo-server.js");
}
