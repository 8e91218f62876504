# syntax=docker/dockerfile:1
#
# mcp-wiretap as a container: the proxy on :8080 for clients on other machines or containers. Listening
# beyond loopback requires proxy credentials, so MCP_WIRETAP_PROXY_AUTH=user:password must be set.
#
#   docker build -t mcp-wiretap .
#   docker run -d --name wiretap -p 127.0.0.1:8080:8080 -e MCP_WIRETAP_PROXY_AUTH=wiretap:change-me \
#     -v wiretap-certs:/app/certs -v wiretap-logs:/app/logs mcp-wiretap
#   docker cp wiretap:/app/certs/ca.pem ./mcp-wiretap-ca.pem       # the CA your clients must trust
#
# The CA (and its key) live in the /app/certs volume, the NDJSON records in /app/logs. Other commands:
# `docker run --rm -v wiretap-certs:/app/certs mcp-wiretap ca show`.
#
# test/packaging/dockerfile.test.ts runs this file's COPY and RUN steps without a container engine: keep
# the builder's steps plain shell commands and the runtime's RUN to directory setup (mkdir/chown/chmod).

FROM node:24-slim AS builder
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY scripts/build-cli.mjs ./scripts/build-cli.mjs
COPY config ./config
RUN npm run build
RUN npm prune --omit=dev --no-audit --no-fund

FROM node:24-slim AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY --from=builder /app/package.json ./package.json
COPY --from=builder /app/node_modules ./node_modules
COPY --from=builder /app/dist ./dist
COPY config ./config
RUN mkdir -p /app/certs /app/logs && chown node:node /app/certs /app/logs && chmod 0700 /app/certs
# The image's unprivileged user (uid 1000).
USER node
VOLUME ["/app/certs", "/app/logs"]
EXPOSE 8080
# slim has no curl: ask the proxy's own /healthz with node.
HEALTHCHECK --interval=30s --timeout=5s --start-period=15s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:8080/healthz',{signal:AbortSignal.timeout(4000)}).then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# A young generation of at most 8 MiB per semi-space: after a burst of traffic V8 otherwise keeps up to
# 64 MiB per semi-space (and the old pages that go with it) until it has been idle for a while.
ENTRYPOINT ["node", "--max-semi-space-size=8", "dist/cli/main.js"]
CMD ["start", "--host", "0.0.0.0", "--ca-dir", "/app/certs", "--log-file", "/app/logs/mcp-wiretap.ndjson"]
