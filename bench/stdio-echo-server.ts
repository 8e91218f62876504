/** A stdio JSON-RPC server for the bench: answers every request line at once with an empty result. */
let pending = "";
process.stdin.setEncoding("utf8").on("data", (chunk: string) => {
  pending += chunk;
  let out = "";
  for (let nl = pending.indexOf("\n"); nl !== -1; nl = pending.indexOf("\n")) {
    const line = pending.slice(0, nl);
    pending = pending.slice(nl + 1);
    const m = /"id":(\d+)/.exec(line);
    if (m) out += `{"jsonrpc":"2.0","id":${m[1]},"result":{}}\n`;
  }
  if (out) process.stdout.write(out);
});
process.stdin.on("end", () => process.exit(0));
