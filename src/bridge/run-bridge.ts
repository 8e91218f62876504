/**
 * `mcp-wiretap bridge URL`: a stdio MCP server that is a remote one. The stdio client's messages go to URL
 * over Streamable HTTP through an embedded proxy — the same pipeline as `start`, so each record shows the
 * real server, the transport and the TLS of the connection, and enforce mode blocks there what policy
 * forbids — and every message of the answers comes back on stdout, one line each.
 */
import { once } from "node:events";
import { readFileSync } from "node:fs";
import { ProxyAgent } from "undici";
import { SseClient } from "./sse-client.js";
import { StreamableClient } from "./streamable-client.js";
import { proxyUrlFor } from "../cli/client-env.js";
import type { StartOptions } from "../cli/start.js";
import { DEFAULT_MAX_INSPECT_BYTES } from "../body/index.js";
import { openLaunchLog, stdioLogFolder } from "../stdio/log-folder.js";
import { UsageError } from "../util/usage-error.js";

export interface BridgeOptions {
  url: string;
  /** "Name: value" pairs. */
  headers: string[];
  /** "Name=VARIABLE" pairs: the header's value is that environment variable's. */
  headerEnv: string[];
  /** "streamable" (Streamable HTTP, the default) or "sse" (legacy HTTP+SSE). */
  transport: "streamable" | "sse";
  start: StartOptions;
}

export async function runBridge(o: BridgeOptions): Promise<number> {
  const url = checkUrl(o.url);
  const headers = { ...parseHeaders(o.headers), ...headersFromEnv(o.headerEnv) };
  const { startProxy } = await import("../cli/start.js");
  // Without --log-file, each bridge writes its own file in the per-user folder, as `stdio` does.
  const logFd = o.start.logFile === undefined ? openLaunchLog(stdioLogFolder(), `bridge-${url.host}`).fd : undefined;
  const proxy = await startProxy({ ...o.start, ...(logFd !== undefined ? { logFd } : {}), clientHint: false });
  const dispatcher = new ProxyAgent({ uri: proxyUrlFor(proxy.address, o.start.proxyAuth), requestTls: { ca: readFileSync(proxy.caCertPath, "utf8") } });
  const maxLine = o.start.maxInspectBytes ?? DEFAULT_MAX_INSPECT_BYTES;
  const warn = (text: string): void => void process.stderr.write(`mcp-wiretap bridge: ${text}\n`);
  const ready = async (): Promise<void> => {
    if (process.stdout.writableNeedDrain) await once(process.stdout, "drain");
  };
  const clientOptions = { url: url.href, headers, dispatcher, deliver: (line: string) => void process.stdout.write(line + "\n"), warn, maxBodyBytes: maxLine, ready };
  const client = o.transport === "sse" ? new SseClient(clientOptions) : new StreamableClient(clientOptions);

  await readLines(process.stdin, maxLine, (line) => {
    let message: unknown;
    try {
      message = JSON.parse(line);
    } catch {
      warn("a line from the client that is not JSON was dropped");
      return;
    }
    void client.send(message);
  }, warn);
  await client.close();
  await dispatcher.close();
  await proxy.stop("the client closed stdin");
  return 0;
}

function checkUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UsageError(`bridge: ${text} is not a URL`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") throw new UsageError(`bridge: ${text}: only http:// and https:// servers`);
  return url;
}

/**
 * "Name: value" pairs; `${VAR}` in a value is taken from the environment, so a config entry can keep a
 * credential in its `env` rather than on the command line (which other users of the machine can list).
 */
export function parseHeaders(pairs: string[], env: NodeJS.ProcessEnv | null = process.env): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of pairs) {
    const colon = pair.indexOf(":");
    const name = colon > 0 ? pair.slice(0, colon).trim() : "";
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) throw new UsageError(`--header: give "Name: value" (a header name first)`);
    const raw = pair.slice(colon + 1).trim();
    const value = env === null ? raw : raw.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, variable: string) => {
        if (env[variable] === undefined) throw new UsageError(`--header ${name}: \${${variable}} is not set in the environment`);
        return env[variable]!;
      });
    // eslint-disable-next-line no-control-regex
    if (/[\u0000-\u0008\u000a-\u001f\u007f]/.test(value)) throw new UsageError(`--header ${name}: a control character in the value`);
    out[name.toLowerCase()] = value;
  }
  return out;
}

/** `--header-env Name=VARIABLE`: what `wrap --remote` writes, so the secret stays in the entry's env. */
export function headersFromEnv(pairs: string[], env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  return parseHeaders(
    pairs.map((pair) => {
      const m = /^([^=]+)=([A-Za-z_][A-Za-z0-9_]*)$/.exec(pair);
      if (!m) throw new UsageError(`--header-env ${pair}: give Name=VARIABLE`);
      if (env[m[2]!] === undefined) throw new UsageError(`--header-env ${m[1]}: ${m[2]} is not set in the environment`);
      return `${m[1]}: ${env[m[2]!]}`;
    }),
    null,
  );
}

/** Newline-delimited lines of `input`, each at most `max` bytes (a longer one is dropped with a warning). */
function readLines(input: NodeJS.ReadableStream, max: number, onLine: (line: string) => void, warn: (text: string) => void): Promise<void> {
  return new Promise((resolve) => {
    let parts: Buffer[] = [];
    let size = 0;
    let skipping = false;
    input.on("data", (chunk: Buffer) => {
      let at = 0;
      for (let nl = chunk.indexOf(10, at); nl >= 0; nl = chunk.indexOf(10, at)) {
        const piece = chunk.subarray(at, nl);
        if (!skipping && size + piece.length <= max) {
          const line = Buffer.concat([...parts, piece]).toString("utf8").replace(/\r$/, "");
          if (line.trim() !== "") onLine(line);
        }
        parts = [];
        size = 0;
        skipping = false;
        at = nl + 1;
      }
      const rest = chunk.subarray(at);
      if (skipping) return;
      if (size + rest.length > max) {
        warn(`a line longer than ${max} bytes from the client was dropped`);
        parts = [];
        size = 0;
        skipping = true;
        return;
      }
      parts.push(Buffer.from(rest));
      size += rest.length;
    });
    input.once("end", () => resolve());
    input.once("error", () => resolve());
  });
}
