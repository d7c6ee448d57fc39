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
    serializers: { err: errorForLog },
  };
  return options.destination === undefined ? pino(loggerOptions) : pino(loggerOptions, options.destination);
}

/**
 * A thrown value as every log line writes it (`{ err: error }`): its type, message and stack, with its
 * causes' (pino's own serializer), and its `code`; nothing else it carries. ioredis attaches the command a
 * server refused, whose arguments hold an AUTH's password, and HTTP clients their requests and answers.
 */
function errorForLog(value: unknown): unknown {
  if (!(value instanceof Error)) return value;
  const { type, message, stack } = pino.stdSerializers.err(value);
  const { code } = value as { code?: unknown };
  return { type, message, stack, ...(typeof code === "string" || typeof code === "number" ? { code } : {}) };
}
