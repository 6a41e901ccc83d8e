/** An operation that failed (unknown user, refused value, unreachable database): exit 1, one line. */
export class Failure extends Error {}
