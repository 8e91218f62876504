import { createWriteStream, type WriteStream } from "node:fs";

/**
 * NSS key-log lines (what SSLKEYLOGFILE holds) for both TLS legs, so Wireshark can decrypt a capture of
 * the same traffic. The file holds session secrets: created 0600, appended to.
 */
export class KeyLog {
  private readonly stream: WriteStream;

  constructor(readonly file: string) {
    this.stream = createWriteStream(file, { flags: "a", mode: 0o600 });
    this.stream.on("error", () => {
      // A key log that cannot be written must not take the proxy down; the start record names the file.
    });
  }

  readonly write = (line: Buffer): void => {
    this.stream.write(line);
  };

  close(): Promise<void> {
    return new Promise((resolve) => this.stream.end(() => resolve()));
  }
}
