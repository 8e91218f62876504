/**
 * Node's module compile cache for the CLI: V8's compiled code of every module, kept between launches, so a
 * client that starts ten wrapped servers does not compile the same modules ten times. It lives in a
 * private per-user folder, `$XDG_CACHE_HOME/mcp-wiretap/compile-cache` (else `~/.cache/…`), 0700, never
 * Node's default in the shared temporary folder: compiled code another user could plant there would run as
 * ours. NODE_COMPILE_CACHE (a folder of the user's choice) and NODE_DISABLE_COMPILE_CACHE=1 are respected.
 * Only start-up speed depends on it: any failure leaves it off.
 */
import module from "node:module";
import os from "node:os";
import path from "node:path";
import { ensurePrivateDir } from "../util/private-file.js";

export function compileCacheFolder(env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env.XDG_CACHE_HOME;
  return path.join(xdg && path.isAbsolute(xdg) ? xdg : path.join(os.homedir(), ".cache"), "mcp-wiretap", "compile-cache");
}

export function enableCompileCache(env: NodeJS.ProcessEnv = process.env): void {
  if (env.NODE_COMPILE_CACHE !== undefined || env.NODE_DISABLE_COMPILE_CACHE !== undefined || typeof module.enableCompileCache !== "function") return;
  try {
    const dir = compileCacheFolder(env);
    ensurePrivateDir(dir, "the compile cache folder");
    module.enableCompileCache(dir);
  } catch {
    // a folder we may not use: start without the cache
  }
}
