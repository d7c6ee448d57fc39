#!/usr/bin/env node
import { parseArgs } from "node:util";
import { loadOrCreateDevKey } from "./dev-key.js";
import { mintDevToken } from "./dev-token.js";

const usage = `Usage: npm run token -- --org <org> [--client <clientId>] [--ttl <seconds>]

Prints a development access token (RS256, signed with the key in DEV_ISSUER_DIR or <repo>/.dev-issuer)
that an API started with AUTH_DEV_ISSUER=true accepts.`;

function readArgs(argv: readonly string[]) {
  return parseArgs({
    args: [...argv],
    options: {
      org: { type: "string" },
      client: { type: "string", default: "quickstart-cli" },
      ttl: { type: "string", default: "3600" },
      help: { type: "boolean", short: "h", default: false },
    },
    strict: true,
    allowPositionals: false,
  });
}

/** Prints only the token on stdout so that `TOKEN=$(npm run -s token -- --org acme)` works. */
async function main(argv: readonly string[]): Promise<number> {
  let parsed: ReturnType<typeof readArgs>;
  try {
    parsed = readArgs(argv);
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n${usage}\n`);
    return 2;
  }
  const { values } = parsed;
  if (values.help) {
    process.stdout.write(`${usage}\n`);
    return 0;
  }
  if (values.org === undefined || values.org.trim() === "") {
    process.stderr.write(`--org is required\n${usage}\n`);
    return 2;
  }
  if (!/^[1-9]\d{0,8}$/.test(values.ttl)) {
    process.stderr.write(`--ttl must be a positive number of seconds, got "${values.ttl}"\n`);
    return 2;
  }
  const key = await loadOrCreateDevKey();
  process.stdout.write(`${mintDevToken(key, { org: values.org, clientId: values.client, expiresInSeconds: Number(values.ttl) })}\n`);
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  },
);
