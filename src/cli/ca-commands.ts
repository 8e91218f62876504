import { loadOrCreateCa } from "../ca/index.js";

export async function caPathCommand(opts: { caDir: string }): Promise<void> {
  const ca = await loadOrCreateCa(opts.caDir);
  process.stdout.write(`${ca.certPath}\n`);
  if (ca.created) process.stderr.write(`mcp-wiretap: created a new CA in ${ca.dir}\n`);
}

export async function caShowCommand(opts: { caDir: string; json?: boolean }): Promise<void> {
  const ca = await loadOrCreateCa(opts.caDir);
  const info = ca.info();
  if (opts.json) {
    process.stdout.write(`${JSON.stringify(info, null, 2)}\n`);
  } else {
    process.stdout.write(
      [
        `Subject:     ${info.subject}`,
        `Not before:  ${info.notBefore}`,
        `Not after:   ${info.notAfter}`,
        `SHA-256:     ${info.fingerprint256}`,
        `Certificate: ${info.certPath}`,
        `Private key: ${info.keyPath} (mode 0600)`,
        "",
      ].join("\n"),
    );
  }
  if (ca.warning) process.stderr.write(`mcp-wiretap: ${ca.warning}\n`);
}
