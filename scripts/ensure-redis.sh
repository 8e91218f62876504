#!/bin/sh
# Installs redis-server for the shared-state tests when it is missing (Debian/Ubuntu, as root).
# A no-op when it is present; when it cannot be had, the tests that need it skip and say so.
set -eu
if command -v redis-server >/dev/null 2>&1; then exit 0; fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends redis-server >/dev/null
  # The package starts a system service; the tests start their own on a loopback port.
  (service redis-server stop || true) >/dev/null 2>&1
  exit 0
fi
echo "ensure-redis: redis-server is missing and cannot be installed here (needs root and apt-get); the shared-state tests will skip" >&2
