#!/usr/bin/env bash
# What `npm test` needs beyond node_modules, from Debian's packages:
#   chromium        the web UI's browser tests (test/ui/*.test.ts, driven by puppeteer-core)
#   libxml2-utils   xmllint, which validates `mcp-wiretap check --format junit` against the JUnit schema
#   redis-server    the shared state of proxy replicas (--state redis://…)
#   haproxy         the load balancer of deploy/haproxy.cfg, in front of two replicas (test/deploy)
# Each is installed only when missing, running as root with apt-get (one `apt-get update` for all);
# otherwise this says how, and the tests that need it say loudly that they are skipped.
set -euo pipefail
missing=()
browser="${MCP_WIRETAP_CHROMIUM:-/usr/bin/chromium}"
[ -x "$browser" ] || missing+=(chromium)
command -v xmllint >/dev/null 2>&1 || missing+=(libxml2-utils)
command -v redis-server >/dev/null 2>&1 || [ -x /usr/bin/redis-server ] || missing+=(redis-server)
command -v haproxy >/dev/null 2>&1 || [ -x /usr/sbin/haproxy ] || missing+=(haproxy)
[ "${#missing[@]}" -eq 0 ] && exit 0
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "ensure-test-deps: installing ${missing[*]} (Debian packages the tests use)" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  echo "ensure-test-deps: missing ${missing[*]}; install them with apt-get (as root), or set MCP_WIRETAP_CHROMIUM to a Chromium binary" >&2
fi
