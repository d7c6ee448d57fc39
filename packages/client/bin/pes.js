#!/usr/bin/env node
// Plain JavaScript, committed rather than built: npm links a workspace's bin at install time, before
// dist/ exists, and skips a bin whose file is missing. This file is there, so `npx pes` works once built.
import("../dist/cli.js").catch((error) => {
  if (error?.code === "ERR_MODULE_NOT_FOUND" && String(error.message).includes("dist/cli.js")) {
    process.stderr.write("pes is not built yet: run `npm run build` at the repository root first\n");
    process.exitCode = 2;
    return;
  }
  throw error;
});
