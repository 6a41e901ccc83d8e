/** A setting that stops the start: the message names it, and the server prints only that line. */
export class ConfigError extends Error {}
