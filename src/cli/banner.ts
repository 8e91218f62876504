import { isIPv6 } from "node:net";

export interface BannerFacts {
  address: { host: string; port: number };
  caCertPath: string;
  caCreated: boolean;
  logTarget: string;
  insecure: boolean;
  policy: string;
  reverse?: string[];
  /** The web UI's URL, with its token. */
  ui?: string;
}

/** What a user needs to point a client at the proxy, printed to stderr at start. */
export function banner(f: BannerFacts): string {
  const host = f.address.host === "0.0.0.0" || f.address.host === "::" ? "127.0.0.1" : f.address.host;
  const url = `http://${isIPv6(host) ? `[${host}]` : host}:${f.address.port}`;
  const lines = [
    `mcp-wiretap listening on ${url}`,
    `  CA certificate: ${f.caCertPath}${f.caCreated ? " (created now)" : ""}`,
    `  logs: ${f.logTarget}`,
    `  policy: ${f.policy}`,
    ...(f.ui ? [`  UI: ${f.ui}`] : []),
    ...(f.insecure ? ["  WARNING: upstream certificates are not verified (--insecure-upstream)"] : []),
    ...(f.reverse?.length ? ["Reverse mode (point a client at the local URL):", ...f.reverse.map((r) => `  ${r}`)] : []),
    "Point an MCP client at it:",
    `  export HTTPS_PROXY=${url} HTTP_PROXY=${url} NODE_USE_ENV_PROXY=1 NODE_EXTRA_CA_CERTS=${f.caCertPath}`,
    "",
  ];
  return lines.join("\n");
}
