/**
 * Domain errors: what kv/ throws when a rule refuses (never an HTTP status). Each interface
 * maps them once: http/errors.ts to JSON answers, the pages to HTML. `extra` holds the
 * details an answer shows next to the message (the field, the failed checks, a limit).
 */
export type ErrorKind =
  | "invalid"
  | "forbidden"
  | "not_found"
  | "conflict"
  | "gone"
  | "too_large"
  | "unsupported"
  | "limited";

export class DomainError extends Error {
  constructor(
    readonly kind: ErrorKind,
    message: string,
    readonly extra: Record<string, unknown> = {},
    /** Seconds until a limited action may be tried again. */
    readonly retryAfter?: number,
  ) {
    super(message);
    this.name = "DomainError";
  }
}

/** Bad input; `field` names the input field at fault when there is one. */
export function invalid(message: string, field?: string): never {
  throw new DomainError("invalid", message, field === undefined ? {} : { field });
}
export function forbidden(message: string): never {
  throw new DomainError("forbidden", message);
}
export function notFound(message = "not found"): never {
  throw new DomainError("not_found", message);
}
/** The current state does not allow it (a status, a limit reached, a race lost). */
export function conflict(message: string, extra?: Record<string, unknown>): never {
  throw new DomainError("conflict", message, extra);
}
/** Used up or expired for good (a link). */
export function gone(message: string): never {
  throw new DomainError("gone", message);
}
export function tooLarge(message: string, extra?: Record<string, unknown>): never {
  throw new DomainError("too_large", message, extra);
}
export function unsupported(message: string, extra?: Record<string, unknown>): never {
  throw new DomainError("unsupported", message, extra);
}
/** A rate or quota limit: try again after `retryAfter` seconds. */
export function limited(
  message: string,
  retryAfter: number,
  extra?: Record<string, unknown>,
): never {
  throw new DomainError("limited", message, extra, retryAfter);
}
