/** HAR 1.2 (http://www.softwareishard.com/blog/har-12-spec/), the parts written here. */
export interface Har {
  log: {
    version: "1.2";
    creator: { name: string; version: string };
    entries: HarEntry[];
    comment?: string;
  };
}

export interface HarNameValue {
  name: string;
  value: string;
}

export interface HarEntry {
  startedDateTime: string;
  time: number;
  request: {
    method: string;
    url: string;
    httpVersion: string;
    cookies: HarNameValue[];
    headers: HarNameValue[];
    queryString: HarNameValue[];
    postData?: { mimeType: string; text: string; comment?: string };
    headersSize: number;
    bodySize: number;
  };
  response: {
    status: number;
    statusText: string;
    httpVersion: string;
    cookies: HarNameValue[];
    headers: HarNameValue[];
    content: { size: number; mimeType: string; text?: string; comment?: string };
    redirectURL: string;
    headersSize: number;
    bodySize: number;
  };
  cache: Record<string, never>;
  timings: { blocked: number; dns: number; connect: number; ssl: number; send: number; wait: number; receive: number };
  serverIPAddress?: string;
  connection?: string;
  comment?: string;
  /** Custom field (HAR allows `_` names): what mcp-wiretap knows about the exchange. */
  _mcp: McpEntryInfo;
}

export interface McpEntryInfo {
  flow: string;
  mode: string | null;
  client: string | null;
  statusSource: string | null;
  tls: unknown;
  transport?: string;
  session?: string;
  protocolVersion?: string;
  error?: unknown;
  insecureUpstream?: true;
  /** Bodies rebuilt from logged messages whose payload the log holds only in part (truncated, omitted). */
  incomplete?: true;
  messages: McpMessageSummary[];
}

export interface McpMessageSummary {
  time: string | null;
  direction: string | null;
  kind: string | null;
  id?: unknown;
  method?: string;
  tool?: string;
  bytes?: number;
  latencyMs?: number;
  decision?: { action: string; enforced: boolean; rules: string[]; effect?: string };
  reason?: string;
  sseEventId?: string;
  batch?: unknown;
  related?: unknown;
  argsHash?: string;
}
