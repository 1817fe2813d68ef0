/** A valid proposal form body, with overrides. */
export const proposal = (o: Record<string, unknown> = {}) => ({
  name: "Ada Lovelace",
  email: "ada@example.org",
  title: "Analytical engines for beginners",
  area: "technical",
  summary: "A module that explains the engine.\n\nWith exercises.",
  trail: "# Trail\n\n- started",
  files: [{ label: "Notes", url: "https://example.org/notes.pdf" }],
  attribution: "keep",
  ...o,
});
