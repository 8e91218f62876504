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

export class LegacyEndpoints {
  private readonly byKey = new Map<string, LegacySession>();

  constructor(private readonly max: number) {}

  /** Registers the endpoint announced on a GET stream; `base` is the stream's own URL. */
  register(data: string, base: URL, streamFlow: string, server: string): LegacySession | null {
    let url: URL;
    try {
      url = new URL(data.trim(), base);
    } catch {
      return null;
    }
    const endpointPath = `${url.pathname}${url.search}`;
    const session: LegacySession = { key: `${hostPort(url)}${endpointPath}`, endpointPath, streamFlow, server };
    this.byKey.delete(session.key);
    this.byKey.set(session.key, session);
    if (this.byKey.size > this.max) this.byKey.delete(this.byKey.keys().next().value as string);
    return session;
  }

  lookup(server: string, pathWithQuery: string): LegacySession | undefined {
    return this.byKey.get(`${server}${pathWithQuery}`);
  }

  remove(session: LegacySession): void {
    this.byKey.delete(session.key);
  }

  all(): LegacySession[] {
    return [...this.byKey.values()];
  }
}

function hostPort(url: URL): string {
  const port = url.port || (url.protocol === "https:" ? "443" : "80");
  return `${url.hostname}:${port}`;
}
