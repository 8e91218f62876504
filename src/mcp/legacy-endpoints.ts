import { ENTRY_OVERHEAD, EvictionReport, textBytes, type EvictionSink, type TableBounds } from "../bounds/evictions.js";
import { SharedTable } from "../bounds/shared-table.js";
import { serverPeer } from "./table-peer.js";

/**
 * The legacy HTTP+SSE transport (2024-11-05) announces, in the first event of its GET stream, the URL
 * the client must POST to; whatever the session parameter is called, that exact URL identifies the
 * session. This table maps it back to the stream the responses will arrive on.
 */
export interface LegacySession {
  /** `host:port/path?query` of the endpoint: the session's identity in records and correlation. */
  key: string;
  /** Path and query the client posts to, as shown in records. */
  endpointPath: string;
  streamFlow: string;
  server: string;
  /** Enforce mode: sends bytes down the session's event stream (policy errors for denied POSTs). */
  inject?: (raw: Buffer) => void;
}

/**
 * An endpoint longer than a request head the proxy accepts (Node's `--max-http-header-size`, 16 KiB by
 * default) is not registered: no POST to it can come through the proxy, and reading it as a URL would copy
 * its text several times over (a server announcing 2,000 endpoints of 512 KiB cost a GB of garbage so).
 * node:http is taken when an endpoint is first announced, not at import: this module is on `stdio`'s path,
 * where no endpoint ever comes, and loading node:http (for this one number) cost a launch some 5 ms.
 */
function maxEndpointChars(): number {
  return process.getBuiltinModule("node:http").maxHeaderSize;
}

/** Endpoints one stream may hold at once: a server announces one; a stream announcing more keeps its latest. */
export const MAX_ENDPOINTS_PER_STREAM = 8;

/**
 * Bounded by entries and bytes (an endpoint URL is as long as its server makes it), each server to a share
 * of them (the server whose stream announced it), and by stream: a stream's endpoints go when it ends
 * (`removeStream`). What is evicted is reported as a `table_evicted` record.
 */
export class LegacyEndpoints {
  private readonly byKey: SharedTable<LegacySession>;
  private readonly byStream = new Map<string, Set<string>>();
  private readonly streamEvictions: EvictionReport;

  constructor(bounds: TableBounds, report: EvictionSink = () => undefined, share?: TableBounds) {
    this.streamEvictions = new EvictionReport("legacy_endpoints", bounds, report);
    this.byKey = new SharedTable("legacy_endpoints", bounds, report, (s) => this.unlink(s), share);
  }

  /** Writes the evictions still counted (at shutdown). */
  flushEvictions(): void {
    this.streamEvictions.flush();
    this.byKey.flushEvictions();
  }

  /** Endpoints held, and the bytes they take. */
  get usage(): { entries: number; bytes: number } {
    return this.byKey.usage;
  }

  /** Registers the endpoint announced on a GET stream; `base` is the stream's own URL. */
  register(data: string, base: URL, streamFlow: string, server: string): LegacySession | null {
    if (data.length > maxEndpointChars()) return null;
    let url: URL;
    try {
      url = new URL(data.trim(), base);
    } catch {
      return null;
    }
    // Another origin's endpoint is none of this stream's: the MCP SDKs refuse it, and held under that origin it
    // would replace (and, ending with this stream, end) the endpoint its own server announced.
    if (url.origin !== base.origin) return null;
    const endpointPath = `${url.pathname}${url.search}`;
    const session: LegacySession = { key: `${hostPort(url)}${endpointPath}`, endpointPath, streamFlow, server };
    const previous = this.byKey.get(session.key);
    if (previous) this.remove(previous);
    const ofStream = this.byStream.get(streamFlow) ?? new Set<string>();
    ofStream.add(session.key);
    this.byStream.set(streamFlow, ofStream);
    this.byKey.set(session.key, session, serverPeer(server), endpointBytes(session));
    while (ofStream.size > MAX_ENDPOINTS_PER_STREAM) {
      const oldest = this.byKey.get(ofStream.values().next().value as string)!;
      this.remove(oldest);
      this.streamEvictions.evicted("per_stream", endpointBytes(oldest));
    }
    return session;
  }

  lookup(server: string, pathWithQuery: string): LegacySession | undefined {
    return this.byKey.get(`${server}${pathWithQuery}`);
  }

  remove(session: LegacySession): void {
    if (this.byKey.get(session.key) !== session) return;
    this.byKey.delete(session.key);
    this.unlink(session);
  }

  private unlink(session: LegacySession): void {
    const ofStream = this.byStream.get(session.streamFlow);
    ofStream?.delete(session.key);
    if (ofStream?.size === 0) this.byStream.delete(session.streamFlow);
  }

  /** The stream that announced them ended: its endpoints go, returned (their sessions end with it). */
  removeStream(streamFlow: string): LegacySession[] {
    const keys = [...(this.byStream.get(streamFlow) ?? [])];
    const removed = keys.map((k) => this.byKey.get(k)).filter((s): s is LegacySession => s !== undefined);
    for (const s of removed) this.remove(s);
    return removed;
  }

  all(): LegacySession[] {
    return this.byKey.values();
  }
}

/** Its key and path (the key holds the path again), its stream's id and server, and the overhead. */
function endpointBytes(s: LegacySession): number {
  return textBytes(s.key, s.endpointPath, s.streamFlow, s.server) + ENTRY_OVERHEAD;
}

function hostPort(url: URL): string {
  const port = url.port || (url.protocol === "https:" ? "443" : "80");
  return `${url.hostname}:${port}`;
}
