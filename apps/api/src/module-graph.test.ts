// The API validates configuration with the connectors' schemas only (`@pes/connectors/schemas`): it must
// not load a connector's runtime or the HTTP client (undici) that only the worker uses, nor Bull Board
// unless its dashboard is switched on. The built API is started with a module hook that records every
// module it resolves, serves a request, then is stopped.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { freePort, startRedis, uniquePrefix, type RedisHandle } from "@pes/local-services";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const MAIN = fileURLToPath(new URL("../dist/main.js", import.meta.url));
const CONFIG_DIR = fileURLToPath(new URL("../../../config/example", import.meta.url));

const HOOKS = `import { appendFileSync } from "node:fs";
export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  appendFileSync(process.env.PES_MODULE_LOG, result.url + "\\n");
  return result;
}
`;
const REGISTER = `import { register } from "node:module";
register("./hooks.mjs", import.meta.url);
`;

describe("the api process", () => {
  let redis: RedisHandle;
  let dir: string;
  beforeAll(async () => {
    redis = await startRedis();
    dir = await mkdtemp(join(tmpdir(), "api-module-graph-"));
    await writeFile(join(dir, "hooks.mjs"), HOOKS);
    await writeFile(join(dir, "register.mjs"), REGISTER);
  });
  afterAll(async () => {
    await redis?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it("loads the connectors' schemas, never their runtime nor undici", async () => {
    const port = await freePort();
    const log = join(dir, "modules.log");
    const child = spawn(process.execPath, ["--import", join(dir, "register.mjs"), MAIN], {
      env: {
        PATH: process.env.PATH ?? "",
        PES_MODULE_LOG: log,
        PORT: String(port),
        HOST: "127.0.0.1",
        REDIS_URL: redis.url,
        QUEUE_PREFIX: uniquePrefix("api-modules"),
        CONFIG_DIR,
        AUTH_DEV_ISSUER: "true",
        DEV_ISSUER_DIR: join(dir, "issuer"),
        LOG_LEVEL: "info",
        SHUTDOWN_DRAIN_MS: "0",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const exited = once(child, "exit");
    let output = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
    while (!output.includes('"msg":"listening"')) {
      const event = await Promise.race([once(child.stdout, "data").then(() => "data"), exited.then(() => "exit")]);
      if (event === "exit") throw new Error(`api exited before listening:\n${output}`);
    }
    expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(200);
    child.kill("SIGTERM");
    await exited;

    const modules = (await readFile(log, "utf8")).split("\n").filter((url) => url !== "");
    const connectors = modules.filter((url) => url.includes("/packages/connectors/"));
    expect(connectors).toContainEqual(expect.stringMatching(/\/packages\/connectors\/dist\/schemas\.js$/));
    expect(connectors.filter((url) => /\/(index|run-action|runtime|undici-http-client)\.js$/.test(url))).toEqual([]);
    expect(modules.filter((url) => url.includes("/node_modules/undici/"))).toEqual([]);
    // The MCP SDK is loaded on the first MCP request (mcp-endpoint.ts).
    expect(modules.filter((url) => url.includes("/node_modules/@modelcontextprotocol/") || url.includes("/packages/mcp/"))).toEqual([]);
    // Bull Board is loaded only when ADMIN_DASHBOARD is on.
    expect(modules.filter((url) => url.includes("/node_modules/@bull-board/"))).toEqual([]);
    // The chart renderer (ECharts, resvg) is loaded on the first chart asked for.
    expect(modules.filter((url) => /\/node_modules\/(echarts|@resvg)\/|\/packages\/charts\//.test(url))).toEqual([]);
  });
});
