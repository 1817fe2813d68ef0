import { z } from "zod";
import { INVISIBLE_MESSAGE, visibleText } from "../lib/text.ts";

const CONTROL = /\p{Cc}/u;
/** Control characters other than newline, carriage return and tab. */
const CONTROL_BUT_LINES = /[^\P{Cc}\n\r\t]/u;

/** Trimmed one-line text up to `max` characters, without control characters or lone surrogates. */
export const oneLineField = (max: number) =>
  z.string().trim().max(max).refine((s) => s.isWellFormed() && !CONTROL.test(s), {
    message: "must be one line of text without control characters",
  }).refine(visibleText, { message: INVISIBLE_MESSAGE });

/** Trimmed text up to `max` characters; newlines and tabs allowed, other controls and lone
 * surrogates (not text: they cannot be written as UTF-8) not. */
export const multiLine = (max: number, min = 0) =>
  z.string().trim().min(min).max(max).refine(
    (s) => s.isWellFormed() && !CONTROL_BUT_LINES.test(s),
    {
      message: "must not contain control characters",
    },
  );

export { chars, INVISIBLE_MESSAGE, visibleText } from "../lib/text.ts";
