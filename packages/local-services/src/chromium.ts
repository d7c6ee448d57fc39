import { access } from "node:fs/promises";
import type { Browser } from "playwright-core";

/** Debian's `chromium`, or the one `CHROMIUM_PATH` names. */
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

/**
 * A headless Chromium driven by playwright-core, for tests that render what a person sees (the API
 * reference, an execution's page, a Teams card). It makes no request of its own (no background
 * networking, updates or sync), so a test can hold it to 127.0.0.1. Fails with how to install it
 * when it is missing. playwright-core is loaded here, not when the test kit is.
 */
export async function launchChromium(): Promise<Browser> {
  await access(CHROMIUM).catch(() => {
    throw new Error(`${CHROMIUM} not found: install Debian's chromium (apt-get install chromium) or set CHROMIUM_PATH`);
  });
  const { chromium } = await import("playwright-core");
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}
