#!/bin/sh
# Tools some tests need beyond node_modules: xmllint (Debian package libxml2-utils) validates the JUnit
# output of `mcp-wiretap check`. Installed only when missing, running as root, with apt-get available;
# otherwise the test that needs it says loudly that it is skipped.
set -eu
if command -v xmllint >/dev/null 2>&1; then exit 0; fi
if [ "$(id -u)" != "0" ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "test/setup.sh: xmllint is missing and cannot be installed here (needs root and apt-get): install libxml2-utils" >&2
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
apt-get install -y -qq libxml2-utils >/dev/null
