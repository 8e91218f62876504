/**
 * Connects the official MCP SDK client, optionally through an HTTP proxy.
 *
 * All of the transport's traffic (POSTs, the SSE GET stream, DELETE) goes
 * through undici's own `fetch` with a dedicated dispatcher:
 *   - with `proxyUrl`: `ProxyAgent` (CONNECT), trusting `caPem` for the
 *     re-signed certificates the proxy presents;
 *   - without: a plain `Agent` trusting `caPem` (direct to the upstream).
 * Both SDK client transports take a single `fetch` option that they use for
 * every request, including the EventSource stream of the SSE transport.
 */
import { Client, type ClientOptions } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";
import { Agent, type Dispatcher, ProxyAgent, fetch as undiciFetch } from "undici";

export interface ConnectOptions {
  /** `http://127.0.0.1:PORT` of the proxy; omitted = connect directly. */
  proxyUrl?: string;
  /** CA(s) to trust for the HTTPS server certificate (the proxy's CA when proxied). */
  caPem?: string | string[];
  /** Client name sent in `initialize` (default "mcp-wiretap-test-client"). */
  clientName?: string;
  /** Extra client options (capabilities, …). */
  clientOptions?: ClientOptions;
  /** Streamable HTTP only: send DELETE to end the session on close() (default true). */
  terminateSessionOnClose?: boolean;
}

export interface ConnectedClient<T> {
  client: Client;
  transport: T;
  dispatcher: Dispatcher;
  /** Every request the transport made, as `METHOD url`. */
  fetched: string[];
  close(): Promise<void>;
}

/** The dispatcher the helpers use: ProxyAgent with `proxyUrl`, else a direct Agent. */
export function createDispatcher(opts: Pick<ConnectOptions, "proxyUrl" | "caPem">): Dispatcher {
  if (opts.proxyUrl) {
    return new ProxyAgent({ uri: opts.proxyUrl, requestTls: opts.caPem ? { ca: opts.caPem } : {} });
  }
  return new Agent({ connect: opts.caPem ? { ca: opts.caPem } : {} });
}

/** A `fetch` for the SDK transports that sends everything via `dispatcher`. */
export function fetchVia(dispatcher: Dispatcher, log?: string[]): FetchLike {
  return async (url, init) => {
    log?.push(`${init?.method ?? "GET"} ${String(url)}`);
    const response = await undiciFetch(url, {
      ...(init as Parameters<typeof undiciFetch>[1]),
      dispatcher,
    });
    return response as unknown as Response;
  };
}

function newClient(opts: ConnectOptions): Client {
  return new Client(
    { name: opts.clientName ?? "mcp-wiretap-test-client", version: "0.0.0" },
    opts.clientOptions,
  );
}

async function connectWith<T extends StreamableHTTPClientTransport | SSEClientTransport>(
  opts: ConnectOptions,
  dispatcher: Dispatcher,
  fetched: string[],
  transport: T,
): Promise<ConnectedClient<T>> {
  const client = newClient(opts);
  let closing: Promise<void> | undefined;
  const close = async (): Promise<void> => {
    if (transport instanceof StreamableHTTPClientTransport && opts.terminateSessionOnClose !== false) {
      await transport.terminateSession().catch(() => undefined);
    }
    await client.close().catch(() => undefined);
    await dispatcher.destroy().catch(() => undefined);
  };
  try {
    await client.connect(transport);
  } catch (error) {
    await client.close().catch(() => undefined);
    await dispatcher.destroy().catch(() => undefined);
    throw error;
  }
  return {
    client,
    transport,
    dispatcher,
    fetched,
    close() {
      closing ??= close();
      return closing;
    },
  };
}

/** Connects over Streamable HTTP (`url` is the `/mcp` endpoint) and runs initialize. */
export async function connectStreamable(
  url: string,
  opts: ConnectOptions = {},
): Promise<ConnectedClient<StreamableHTTPClientTransport>> {
  const dispatcher = createDispatcher(opts);
  const fetched: string[] = [];
  const transport = new StreamableHTTPClientTransport(new URL(url), { fetch: fetchVia(dispatcher, fetched) });
  return connectWith(opts, dispatcher, fetched, transport);
}

/** Connects over legacy HTTP+SSE (`url` is the `/sse` endpoint) and runs initialize. */
export async function connectSse(url: string, opts: ConnectOptions = {}): Promise<ConnectedClient<SSEClientTransport>> {
  const dispatcher = createDispatcher(opts);
  const fetched: string[] = [];
  const transport = new SSEClientTransport(new URL(url), { fetch: fetchVia(dispatcher, fetched) });
  return connectWith(opts, dispatcher, fetched, transport);
}
