type Peer = { address: string; port: number };
type Target = { host: string; port: number };

/**
 * What the proxy reports besides exchanges and messages, as typed events; the records module
 * (`records/proxy-records.ts`) turns each into its record (docs/log-format.md). The proxy never builds a
 * record shape itself, nor imports the module that does.
 */
export type ProxyEvent =
  | { type: "refused_connect"; client: Peer; target?: string; status: number; reason: string; server?: Target }
  | { type: "refused_request"; client: Peer; server?: Target | null; method?: string; host?: string | null; status: number; reason: string }
  | { type: "malformed_request"; connect: boolean; client: Peer; target?: string; requestLine?: string; server?: Target; reason: string }
  | { type: "client_tls_error"; tunnel: string; server: Target; client: Peer; err: string }
  | { type: "tunnel"; tunnel: string; client: Peer; server: Target; bytesUp: number; bytesDown: number; durationMs: number; error?: unknown }
  | { type: "websocket"; flow: string; client: Peer; server: Target; path: string; status: number | null; bytesUp: number; bytesDown: number; durationMs: number; error?: unknown }
  | { type: "addon_error"; addon: string; hook: string; err: string; flow?: string }
  | { type: "engine_error"; kind: string; err: string };
