/**
 * Runs an owner command's `main` with the process arguments and exits with its code; an error
 * it throws prints one line (what `explain` makes of it) and exits 1.
 */
export async function runCommand(
  main: (args: string[]) => Promise<number>,
  explain: (err: unknown) => unknown,
): Promise<never> {
  let code: number;
  try {
    code = await main(Deno.args);
  } catch (err) {
    console.error(explain(err));
    code = 1;
  }
  Deno.exit(code);
}

/** The message of an Error, else the thrown value as text. */
export const messageOf = (err: unknown) => err instanceof Error ? err.message : String(err);
