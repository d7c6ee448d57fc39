import { pino, type DestinationStream, type Logger, type LoggerOptions } from "pino";

export type { Logger };

/**
 * The one logger shape of every process: pino JSON on stdout, with anything that could carry a secret
 * redacted at the source, so no code path can log a token by accident. `destination` (default stdout)
 * lets a test read what would have been logged.
 */
export function createLogger(options: { name: string; level?: string; destination?: DestinationStream }): Logger {
  const loggerOptions: LoggerOptions = {
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
  };
  return options.destination === undefined ? pino(loggerOptions) : pino(loggerOptions, options.destination);
}
