/** Debian's HAProxy running deploy/haproxy.cfg on loopback, for the tests of replicas behind it. */
import { execFileSync } from "node:child_process";

export function haproxyBinary(): string | null {
  for (const bin of ["haproxy", "/usr/sbin/haproxy"]) {
    try {
      execFileSync(bin, ["-v"], { stdio: "ignore" });
      return bin;
    } catch {
      // next
    }
  }
  return null;
}

/** deploy/haproxy.cfg with its listening address and its two servers on loopback; throws if the file changed shape. */
export function loopbackHaproxyConfig(shipped: string, ports: { front: number; a: number; b: number }, statsSocket: string): string {
  const replacements: [string, string][] = [
    ["global\n", `global\n  stats socket ${statsSocket} mode 600 level user\n`],
    ["  bind :8080\n", `  bind 127.0.0.1:${ports.front}\n`],
    ["  server a wiretap-a:8080 check\n", `  server a 127.0.0.1:${ports.a} check inter 1s fall 3 rise 1\n`],
    ["  server b wiretap-b:8080 check\n", `  server b 127.0.0.1:${ports.b} check inter 1s fall 3 rise 1\n`],
  ];
  let out = shipped;
  for (const [from, to] of replacements) {
    if (!out.includes(from)) throw new Error(`deploy/haproxy.cfg no longer has the line ${JSON.stringify(from)}: update this test with it`);
    out = out.replace(from, to);
  }
  return out;
}
