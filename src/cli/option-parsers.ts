import { statSync } from "node:fs";
import { isIP } from "node:net";
import { InvalidArgumentError } from "commander";
import { validateHost } from "../proxy/target.js";

export function parsePort(value: string): number {
  if (!/^\d{1,5}$/.test(value) || Number(value) > 65535) {
    throw new InvalidArgumentError("must be a port number from 0 to 65535 (0 picks a free port).");
  }
  return Number(value);
}

export function parseListenHost(value: string): string {
  // An address to bind, not a destination: 0.0.0.0 and :: (every interface) are what they say.
  const bare = value.replace(/^\[(.*)\]$/, "$1").toLowerCase();
  if (isIP(bare) !== 0) return bare;
  const host = validateHost(value);
  if (!host.ok) throw new InvalidArgumentError(`${host.reason}.`);
  return host.host;
}

export function parsePositiveInt(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1 || !Number.isSafeInteger(Number(value))) {
    throw new InvalidArgumentError("must be a positive whole number.");
  }
  return Number(value);
}

export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

export function isLoopback(host: string): boolean {
  return host === "localhost" || host === "::1" || /^127\.\d+\.\d+\.\d+$/.test(host);
}

const SIZE_UNITS: Record<string, number> = { "": 1, b: 1, k: 1024, kb: 1024, m: 1024 ** 2, mb: 1024 ** 2, g: 1024 ** 3, gb: 1024 ** 3 };

/** "100M", "512k", "1G" or plain bytes. */
export function parseSize(value: string): number {
  const m = /^(\d+)\s*([a-z]*)$/i.exec(value.trim());
  const unit = m ? SIZE_UNITS[m[2]!.toLowerCase()] : undefined;
  if (!m || unit === undefined || Number(m[1]) < 1) throw new InvalidArgumentError("must be a size like 100M, 512k, 1G or a number of bytes.");
  return Number(m[1]) * unit;
}

/** A folder that exists, or a path where one can be made; an existing file is named as what it is. */
export function parseFolder(value: string): string {
  let isFolder: boolean;
  try {
    isFolder = statSync(value).isDirectory();
  } catch {
    return value; // missing (created when needed), or unreadable: said with its reason when used
  }
  if (!isFolder) throw new InvalidArgumentError("is a file, not a folder: give the folder that holds ca.pem, or a path that does not exist yet (it is created 0700).");
  return value;
}
