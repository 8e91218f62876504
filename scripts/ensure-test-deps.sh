#!/usr/bin/env bash
# What `npm test` needs beyond node_modules: Debian's chromium for the web UI's browser tests
# (test/ui/*.test.ts drive it with puppeteer-core). Installed when missing and running as root;
# otherwise says how, and the browser tests report the missing browser.
set -euo pipefail
browser="${MCP_WIRETAP_CHROMIUM:-/usr/bin/chromium}"
if [ -x "$browser" ]; then exit 0; fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "ensure-test-deps: installing chromium (browser tests of the web UI)" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq chromium >/dev/null
else
  echo "ensure-test-deps: $browser is missing; install Debian's chromium (apt-get install chromium) or set MCP_WIRETAP_CHROMIUM" >&2
fi
