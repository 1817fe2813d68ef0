import type { ContentfulStatusCode } from "hono/utils/http-status";

/**
 * An answer the client caused. Routes throw it; the app's error handler turns it into
 * `{error, ...extra}` with the status, so every error shares one shape.
 */
export class ApiError extends Error {
  constructor(
    readonly status: ContentfulStatusCode,
    message: string,
    readonly extra: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = "ApiError";
  }
}

export function fail(
  status: ContentfulStatusCode,
  message: string,
  extra?: Record<string, unknown>,
  headers?: Record<string, string>,
): never {
  throw new ApiError(status, message, extra, headers);
}

export const notFound = (what = "not found"): never => fail(404, what);
