# Sigil container image (issue 8 item 6; README "Running on PostgreSQL / in production").
#   docker build -t sigil .
#   docker run -p 8080:8080 -p 8081:8081 -v sigil-data:/data sigil
# The data volume holds the embedded SQLite store and master.key; with DATABASE_URL and
# SIGIL_MASTER_KEY set it holds nothing that matters. Other commands run the same way, e.g.
#   docker run --rm -v sigil-data:/data sigil backup --out /data/sigil.backup

# Build: install everything (the prepare script compiles TypeScript into dist/), then drop the
# development dependencies. A C++ toolchain is there for native modules (better-sqlite3,
# secp256k1) that build from source when no prebuilt binary can be fetched.
FROM node:24-slim AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY . .
RUN npm install --no-audit --no-fund && npm prune --omit=dev --no-audit --no-fund

# Run: compiled code and production dependencies only, as the unprivileged `node` user.
FROM node:24-slim
ENV NODE_ENV=production \
    SIGIL_DATA_DIR=/data \
    SIGIL_HOST=0.0.0.0
WORKDIR /app
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/bin ./bin
RUN mkdir -p /data && chown node:node /data && chmod 700 /data
USER node
VOLUME ["/data"]
# Public API and auth proxy.
EXPOSE 8080 8081
# docker stop sends SIGTERM: Sigil drains in-flight requests (SIGIL_SHUTDOWN_TIMEOUT_MS, default
# 10 s) and exits 0; give `docker stop -t` more than that.
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=15s --timeout=3s --start-period=30s \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.SIGIL_PORT || 8080) + '/readyz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["node", "bin/sigil.js"]
# First start: init (root credentials are printed once, to the container log), then serve.
CMD ["start"]
