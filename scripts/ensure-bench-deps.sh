#!/usr/bin/env bash
# What `npm run bench` compares against beyond node_modules, from Debian's packages:
#   mitmproxy       mitmdump, the peer the throughput target is set against
#   redis-server    the mcp-wiretap+state path (--state redis://…)
# Each is installed only when missing, running as root with apt-get; otherwise this says how, and the bench
# skips the path that needs it (its targets print SKIP with the reason).
set -euo pipefail
missing=()
command -v mitmdump >/dev/null 2>&1 || missing+=(mitmproxy)
command -v redis-server >/dev/null 2>&1 || [ -x /usr/bin/redis-server ] || missing+=(redis-server)
[ "${#missing[@]}" -eq 0 ] && exit 0
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "ensure-bench-deps: installing ${missing[*]} (Debian packages the bench compares against)" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null || echo "ensure-bench-deps: could not install ${missing[*]}; the bench skips what needs them" >&2
else
  echo "ensure-bench-deps: missing ${missing[*]}; install them with apt-get (as root) to compare against them" >&2
fi
