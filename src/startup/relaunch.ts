/**
 * V8 sizes its heap before any of our code runs: a command that needs other heap settings than Node's
 * defaults starts again with them, in the same process (`process.execve`: same pid, same standard streams,
 * nothing read from them yet), so that a client's config entry (`npx -y mcp-wiretap mcp`) needs no Node
 * options. Skipped where Node has no `execve` (Windows, Node before 22.15) and when the user chose the
 * setting already (on the command line or in NODE_OPTIONS): then the process simply goes on as it is.
 */
export function relaunchWith(flags: readonly string[], env: NodeJS.ProcessEnv = process.env): void {
  const execve = (process as { execve?: (file: string, args: string[], env: NodeJS.ProcessEnv) => never }).execve;
  if (typeof execve !== "function" || process.argv[1] === undefined) return;
  const name = (option: string): string => option.split("=")[0]!.replaceAll("_", "-");
  const chosen = new Set([...process.execArgv, ...(env.NODE_OPTIONS ?? "").split(/\s+/)].map(name));
  if (flags.length === 0 || flags.some((f) => chosen.has(name(f)))) return;
  try {
    execve.call(process, process.execPath, [process.execPath, ...flags, ...process.execArgv, process.argv[1], ...process.argv.slice(2)], env);
  } catch {
    // not allowed here (a sandbox, a seccomp filter): run with Node's defaults
  }
}
