import { closeSync, openSync, readSync } from "node:fs";
/**
 * node:crypto, loaded at its first use rather than at import. Its eighteen modules cost a launch some 10 ms
 * of CPU (more than any other of Node's modules a `stdio` launch takes), and a `stdio` launch answers its
 * first message without a hash: the files on that path take it from here (docs/performance.md).
 */
export function nodeCrypto(): typeof import("node:crypto") {
  return process.getBuiltinModule("node:crypto");
}

/**
 * A random (version 4) UUID, as crypto.randomUUID() makes one, from the system's random device where there is
 * one (Linux, macOS), so that a launch needs no node:crypto for its session id; elsewhere, or should the
 * device not answer in full, crypto.randomUUID(). Not on Windows, where "/dev/urandom" would name a file on the
 * current drive that any user may have put there.
 */
export function randomUuid(): string {
  if (process.platform === "win32") return nodeCrypto().randomUUID();
  const bytes = Buffer.alloc(16);
  try {
    const fd = openSync("/dev/urandom", "r");
    try {
      if (readSync(fd, bytes, 0, 16, null) !== 16) return nodeCrypto().randomUUID();
    } finally {
      closeSync(fd);
    }
  } catch {
    return nodeCrypto().randomUUID();
  }
  bytes[6] = (bytes[6]! & 0x0f) | 0x40; // version 4
  bytes[8] = (bytes[8]! & 0x3f) | 0x80; // variant 10
  const hex = bytes.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
