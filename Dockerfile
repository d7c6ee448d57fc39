# syntax=docker/dockerfile:1
# One image for both processes: `node apps/api/dist/main.js` (default) or `node apps/worker/dist/main.js`.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY . .
RUN npm ci --no-audit --no-fund \
 && TURBO_TELEMETRY_DISABLED=1 npx turbo run build --filter=@pes/api --filter=@pes/worker --filter=@pes/dev-issuer \
 && npm prune --omit=dev --no-audit --no-fund

FROM node:20-bookworm-slim
ENV NODE_ENV=production \
    CONFIG_DIR=/config \
    DEV_ISSUER_DIR=/tmp/dev-issuer
WORKDIR /app
COPY --from=build --chown=node:node /app ./
USER node
EXPOSE 8080
CMD ["node", "apps/api/dist/main.js"]
