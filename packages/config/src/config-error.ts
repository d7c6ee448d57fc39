/** One thing wrong in CONFIG_DIR: which file, where in it, and what. */
export interface ConfigProblem {
  /** Path relative to the config directory, with `/` separators, e.g. `playbooks/acme/checkout.yaml`. */
  file: string;
  /** The field, dotted, e.g. `gadgets.0.actions.1.dataSource`; absent for the file as a whole. */
  path?: string;
  /** 1-based line in the file, when known. */
  line?: number;
  message: string;
}

/** Formats a problem as one line: `config error in <file> at <path>: <message> (line N)`. */
export function formatConfigProblem(problem: ConfigProblem): string {
  const at = problem.path === undefined || problem.path === "" ? "" : ` at ${problem.path}`;
  const line = problem.line === undefined ? "" : ` (line ${problem.line})`;
  return `config error in ${problem.file}${at}: ${problem.message}${line}`;
}

/**
 * CONFIG_DIR is not usable. Carries every problem of every file, not only the first, so that one run
 * shows everything to fix; the message lists them one per line.
 */
export class ConfigError extends Error {
  constructor(readonly problems: readonly ConfigProblem[]) {
    super(problems.map(formatConfigProblem).join("\n"));
    this.name = "ConfigError";
  }
}
