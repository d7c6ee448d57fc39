import { pino, type Logger } from "pino";

export type { Logger };

/**
 * The one logger shape of every process: pino JSON on stdout, with anything that could carry a secret
 * redacted at the source, so no code path can log a token by accident.
 */
export function createLogger(options: { name: string; level?: string }): Logger {
  return pino({
    name: options.name,
    level: options.level ?? "info",
    redact: {
      paths: [
        "req.headers.authorization",
        "req.headers.cookie",
        'req.headers["x-api-key"]',
        "headers.authorization",
        "authorization",
        "token",
        "*.token",
        "password",
        "*.password",
      ],
      censor: "[redacted]",
    },
  });
}
