import { createWriteStream, type WriteStream } from "node:fs";
import { descriptorOfPath, openPrivateAppend } from "../util/private-file.js";

/**
 * NSS key-log lines (what SSLKEYLOGFILE holds) for both TLS legs, so Wireshark can decrypt a capture of
 * the same traffic. The file holds session secrets: created 0600, appended to; a link, or an existing file
 * that others can read, is refused with a PrivateFileError (a usage error) when the proxy starts.
 */
export class KeyLog {
  private readonly stream: WriteStream;

  constructor(readonly file: string) {
    // /dev/stderr and the like are written as their descriptor, never followed as a link nor closed.
    const fd = descriptorOfPath(file);
    this.stream =
      fd === null
        ? createWriteStream(file, { fd: openPrivateAppend(file, "The key-log file (--keylog, or $SSLKEYLOGFILE)") })
        : createWriteStream("", { fd, autoClose: false });
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
