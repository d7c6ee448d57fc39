# syntax=docker/dockerfile:1
# One image for both processes: `node apps/api/dist/main.js` (default) or `node apps/worker/dist/main.js`.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY . .
# Build the two processes (and the packages they import; the API's build copies Redoc's bundle into its
# dist), then install anew only what they need at run time: scripts/production-install.mjs keeps the
# workspaces they import, installs without development and optional dependencies, prints the size of
# node_modules and fails the build above 100 MB (test/e2e/production-install.test.ts runs the same).
RUN npm ci --no-audit --no-fund \
 && TURBO_TELEMETRY_DISABLED=1 npx turbo run build --filter=@pes/api --filter=@pes/worker \
 && node scripts/production-install.mjs \
 && rm -rf scripts

FROM node:20-bookworm-slim
# The heap ceiling bounds RSS under load (the live heap is about 25 MB; without a ceiling V8 lets garbage
# grow the heap first) and must fit the largest answer a worker reads: an http action's JSON answer is
# parsed whole, about 4.5× its size in heap, so one at the 32 MiB cap needs ~145 MB. A Prometheus answer
# is read one series at a time (~15 MB of heap at the cap). docs/operations.md "Memory" has the figures.
# The benchmark and apps/worker's large-answer test read this line.
ENV NODE_ENV=production \
    NODE_OPTIONS="--max-old-space-size=192" \
    CONFIG_DIR=/config \
    DEV_ISSUER_DIR=/tmp/dev-issuer
# The chart renderer (resvg, for the PNGs chat gets) draws text with the system's fonts: DejaVu Sans.
RUN apt-get update \
 && apt-get install -y --no-install-recommends fonts-dejavu-core \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
# Owned by root: the process (the image's `node` user, uid 1000) reads its code and cannot change it. It
# writes nothing but the development issuer's key under /tmp, so the root file system can be read-only.
COPY --from=build /app ./
# Numeric, so that Kubernetes' runAsNonRoot can check it.
USER 1000:1000
EXPOSE 8080 9464
CMD ["node", "apps/api/dist/main.js"]
