# syntax=docker/dockerfile:1
# One image for both processes: `node apps/api/dist/main.js` (default) or `node apps/worker/dist/main.js`.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY . .
# Build the two processes (and the packages they import), then install anew only what they need at run
# time: no compiler, test tools, testcontainers, benchmark or local-services in the image.
RUN npm ci --no-audit --no-fund \
 && TURBO_TELEMETRY_DISABLED=1 npx turbo run build --filter=@pes/api --filter=@pes/worker \
 && rm -rf node_modules bench test scripts \
 && npm ci --omit=dev --workspace=@pes/api --workspace=@pes/worker --no-audit --no-fund

FROM node:20-bookworm-slim
# The heap ceiling keeps each process near 140 MB RSS under load (BENCHMARKS.md): the live heap is about
# 25 MB, and without a ceiling V8 lets uncollected garbage grow the heap to ~210 MB first. Raise it for
# workers whose data sources answer with large payloads. The benchmark reads this line.
ENV NODE_ENV=production \
    NODE_OPTIONS="--max-old-space-size=96" \
    CONFIG_DIR=/config \
    DEV_ISSUER_DIR=/tmp/dev-issuer
WORKDIR /app
COPY --from=build --chown=node:node /app ./
USER node
EXPOSE 8080
CMD ["node", "apps/api/dist/main.js"]
