import { InvalidArgumentError } from "commander";
import { validateHost } from "../proxy/target.js";

export function parsePort(value: string): number {
  if (!/^\d{1,5}$/.test(value) || Number(value) > 65535) {
    throw new InvalidArgumentError("must be a port number from 0 to 65535 (0 picks a free port).");
  }
  return Number(value);
}

export function parseListenHost(value: string): string {
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
