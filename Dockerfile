# market-relay: multi-stage build, runs `market-relay serve` as a non-root user.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# The workspaces' manifests, which the lock file names.
COPY packages/protocol/package.json ./packages/protocol/
COPY packages/client/package.json ./packages/client/
# --ignore-scripts: `prepare` builds dist/, which needs the sources copied below first.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY packages/protocol/src ./packages/protocol/src
COPY packages/client/src ./packages/client/src
COPY scripts ./scripts
RUN npm run build

FROM node:20-bookworm-slim AS runtime
# UPSTREAM_REQUIRED: no default upstream here; `serve` exits 2 without --upstream URL (or UPSTREAM_URL),
# and serves the simulator only when asked with --upstream sim.
ENV NODE_ENV=production HOST=0.0.0.0 PORT=8080 UPSTREAM_REQUIRED=1
WORKDIR /app
COPY package.json package-lock.json ./
COPY packages/protocol/package.json ./packages/protocol/
COPY packages/client/package.json ./packages/client/
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
# dist/ holds the status page's static files too (`npm run build` copies them to dist/src/status-page/).
COPY --from=build /app/dist ./dist
# The embedded history store (docs/history.md) records into a volume the non-root user owns.
RUN mkdir -p /data && chown node:node /data
ENV DATA_DIR=/data
VOLUME /data
USER node
EXPOSE 8080
# Liveness, not /health: an upstream outage must not mark every container unhealthy at once.
HEALTHCHECK --interval=15s --timeout=3s CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/livez').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# The heap flag: docs/operations.md "Heap" (V8 otherwise marks the whole heap every second or two).
ENTRYPOINT ["node", "--initial-old-space-size=128", "dist/src/cli.js"]
CMD ["serve"]
