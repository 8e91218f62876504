#!/usr/bin/env node
/**
 * A stdio "server" for the differential harness: keeps every byte it reads on stdin in $RECEIVED and, once
 * its stdin ends, writes the bytes of $SEND to stdout (the lines a hostile server sends) and exits.
 */
import { appendFileSync, readFileSync } from "node:fs";

process.stdin.on("data", (chunk) => appendFileSync(process.env.RECEIVED, chunk));
process.stdin.on("end", () => {
  process.stdout.write(readFileSync(process.env.SEND), () => process.exit(0));
});
