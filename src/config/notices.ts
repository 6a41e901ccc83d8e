/**
 * What loading the configuration has to tell the operator (a development secret generated into
 * DATA_DIR), kept until something can say it: the configuration is read before the logger exists,
 * since the logger's settings are part of it. The server logs each as a warn line (src/server.ts),
 * the CLI writes each to stderr; a Node process warning would add Node's `--trace-warnings` hint,
 * which is about Node's own deprecations and means nothing to an operator.
 */
const pending: string[] = []

export function notice (message: string): void {
  pending.push(message)
}

/** The notices given since the last call, oldest first; each is handed out once. */
export function takeNotices (): string[] {
  return pending.splice(0)
}
