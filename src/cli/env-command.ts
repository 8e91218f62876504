/**
 * `mcp-wiretap env [--shell sh|fish|powershell] [--proxy URL] [--ca-dir DIR]`: prints the settings `run`
 * gives its command, as shell commands for this shell, derived from its current NO_PROXY and NODE_OPTIONS:
 *
 *   eval "$(mcp-wiretap env)"                         # sh, bash, zsh
 *   mcp-wiretap env --shell fish | source             # fish
 *   mcp-wiretap env --shell powershell | Invoke-Expression
 */
import { Option, type Command } from "commander";
import { clientSettings, DEFAULT_PROXY_URL, parseProxyUrl, renderSettings, SHELLS, withCredentials, type Shell } from "./client-env.js";
import { caDirOption } from "./proxy-options.js";
import path from "node:path";
import { redactUserinfo } from "../log/redact.js";
import { UsageError } from "../util/usage-error.js";

export interface EnvOptions {
  shell: Shell;
  proxy: string;
  caDir: string;
  preload: boolean;
  createCa?: boolean;
  proxyAuth?: string;
}

export function registerEnvCommand(program: Command): Command {
  return program
    .command("env")
    .description("print shell commands that point clients at a running proxy and make them trust its CA")
    .addOption(new Option("--shell <shell>", "syntax of the commands").choices(SHELLS).default("sh"))
    .addOption(new Option("--proxy <url>", "the running proxy").default(DEFAULT_PROXY_URL).argParser(parseProxyUrl))
    .addOption(caDirOption())
    .addOption(new Option("--proxy-auth <user:password>", "credentials of a proxy that requires them (added to the URL)").env("MCP_WIRETAP_PROXY_AUTH"))
    .option("--no-preload", "do not add the Node 20/22 proxy preload to NODE_OPTIONS")
    .option("--create-ca", "create a CA in --ca-dir if it holds none (the proxy must then be started with that folder)")
    .addHelpText(
      "after",
      [
        "",
        "Use:",
        '  eval "$(mcp-wiretap env)"                          sh, bash, zsh',
        "  mcp-wiretap env --shell fish | source              fish",
        "  mcp-wiretap env --shell powershell | Invoke-Expression",
        "Run it again after changing NO_PROXY or NODE_OPTIONS; running it twice is harmless.",
      ].join("\n"),
    )
    .action((o: EnvOptions) => envCommand(o));
}

export async function envCommand(o: EnvOptions): Promise<void> {
  const [{ holdsCa, loadOrCreateCa }, { judgeAttachment, probeProxy }] = await Promise.all([import("../ca/index.js"), import("../attach/running-proxy.js")]);
  // A new CA here is one the running proxy does not sign with: clients would refuse it, so only on request.
  if (!o.createCa && !holdsCa(o.caDir)) {
    throw new UsageError(
      `${path.resolve(o.caDir)} holds no CA (ca.pem): give --ca-dir the folder the proxy at ${redactUserinfo(o.proxy)} was started with, or add --create-ca for a new one (and start the proxy with it)`,
    );
  }
  const ca = await loadOrCreateCa(o.caDir);
  if (ca.created) {
    process.stderr.write(`mcp-wiretap: created a new CA in ${ca.dir}; the proxy at ${redactUserinfo(o.proxy)} must use this --ca-dir\n`);
  }
  const proxyUrl = withCredentials(o.proxy, o.proxyAuth);
  const verdict = judgeAttachment(o.proxy, await probeProxy(o.proxy), { certPath: ca.certPath, fingerprint256: ca.info().fingerprint256 });
  if (!verdict.ok) process.stderr.write(`mcp-wiretap: warning: ${verdict.message}\n`);
  const settings = clientSettings({ proxyUrl, caCertPath: ca.certPath, bundlePath: ca.bundlePath, preload: o.preload }, process.env);
  process.stdout.write(renderSettings(o.shell, settings, "mcp-wiretap env: send clients through the proxy and trust its CA"));
  if (ca.warning) process.stderr.write(`mcp-wiretap: ${ca.warning}\n`);
}
