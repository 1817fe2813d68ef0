// The owner's catalogue command; written in the catalogue issue.
console.error("usage: deno task catalogue import <file.json> | export");
Deno.exit(2);
