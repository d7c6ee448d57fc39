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
# The heap ceiling bounds RSS under load (the live heap is about 25 MB; without a ceiling V8 lets garbage
# grow the heap first) and must fit the largest answer a worker reads: an http action's JSON answer is
# parsed whole, about 4.5× its size in heap, so one at the 32 MiB cap needs ~145 MB. A Prometheus answer
# is read one series at a time (~15 MB of heap at the cap). README "Memory" has the figures. The
# benchmark and apps/worker's large-answer test read this line.
ENV NODE_ENV=production \
    NODE_OPTIONS="--max-old-space-size=192" \
    CONFIG_DIR=/config \
    DEV_ISSUER_DIR=/tmp/dev-issuer
# The chart renderer (resvg, for the PNGs chat gets) draws text with the system's fonts: DejaVu Sans.
RUN apt-get update \
 && apt-get install -y --no-install-recommends fonts-dejavu-core \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY --from=build --chown=node:node /app ./
USER node
EXPOSE 8080
CMD ["node", "apps/api/dist/main.js"]
