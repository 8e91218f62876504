#!/usr/bin/env bash
# `npm run test:deploy`: the deploy kit run for real with podman (not part of `npm test`; .ci/run calls it
# after). Installs what it needs from Debian's packages when missing (as root), makes the local base
# images (scripts/deploy/base-images.sh), then runs test/deploy/containers/ (it builds the shipped
# Dockerfile once). The npm script bounds the whole run to 10 minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
export CONTAINERS_CONF="$PWD/scripts/deploy/containers.conf"
missing=()
for pkg in podman runc mmdebstrap podman-compose slirp4netns netavark aardvark-dns curl; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
done
if [ "${#missing[@]}" -gt 0 ]; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    echo "test:deploy: installing ${missing[*]} (Debian packages)" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  else
    echo "test:deploy: missing ${missing[*]}; install them with apt-get (as root)" >&2
    exit 1
  fi
fi
t0=$SECONDS
bash scripts/deploy/base-images.sh
echo "test:deploy: base images ready in $((SECONDS - t0)) s" >&2
exec npx vitest run --config test/deploy/containers/vitest.config.ts "$@"
