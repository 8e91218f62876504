import { isIPv6 } from "node:net";
import { quoteSh } from "./client-env.js";

export interface BannerFacts {
  address: { host: string; port: number };
  caCertPath: string;
  caCreated: boolean;
  logTarget: string;
  insecure: boolean;
  policy: string;
  reverse?: string[];
  /**
   * How a client in another shell is pointed at the proxy: the lines `mcp-wiretap env` prints, and the
   * folder of the CA for the `env` command line. Absent under `run` (its command gets them) and with
   * --reverse (its clients use the local URLs).
   */
  client?: {
    exports: string[];
    caDir: string;
    command?: string;
    /** The proxy's URL, with --proxy-auth's credentials when they may be shown. */
    proxyUrl?: string;
    /** The proxy wants credentials the lines leave out. */
    credentialsLeftOut?: boolean;
  };
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
  ];
  if (f.client) {
    lines.push(
      `Point an MCP client at it: in its shell, eval "$(${f.client.command ?? "mcp-wiretap"} env --proxy ${shellWord(f.client.proxyUrl ?? url)} --ca-dir ${shellWord(f.client.caDir)})"`,
      "or set these (Node, Python, curl):",
      ...f.client.exports.map((line) => `  ${line}`),
    );
    if (f.client.credentialsLeftOut) {
      lines.push("  (the proxy wants credentials, left out here as stderr is not a terminal: set MCP_WIRETAP_PROXY_AUTH=user:password for `env`, or put user:password@ in the proxy URLs)");
    }
  }
  lines.push("");
  return lines.join("\n");
}

function shellWord(value: string): string {
  return /^[\w./:@%+=,-]+$/.test(value) ? value : quoteSh(value);
}

/**
 * How a user's other shell runs this CLI: `mcp-wiretap` once installed; under `npm start` in a clone it is
 * on no PATH, and `npx` finds it (with the clone's own Node) only from inside the clone.
 */
export function cliCommand(env: NodeJS.ProcessEnv, packageRoot: string): string {
  const fromClone = env.npm_lifecycle_event === "start" && env.npm_package_name === "mcp-wiretap";
  return fromClone ? `cd ${shellWord(packageRoot)} && npx mcp-wiretap` : "mcp-wiretap";
}
