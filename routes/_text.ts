import { z } from "@hono/zod-openapi";

const CONTROL = /\p{Cc}/u;
/** Control characters other than newline, carriage return and tab. */
const CONTROL_BUT_LINES = /[^\P{Cc}\n\r\t]/u;

/** Trimmed one-line text up to `max` characters, without control characters. */
export const oneLine = (max: number) =>
  z.string().trim().max(max).refine((s) => !CONTROL.test(s), {
    message: "must be one line of text without control characters",
  });

/** Trimmed text up to `max` characters; newlines and tabs allowed, other controls not. */
export const multiLine = (max: number, min = 0) =>
  z.string().trim().min(min).max(max).refine((s) => !CONTROL_BUT_LINES.test(s), {
    message: "must not contain control characters",
  });
