// The owner's role command; written in the foundation issue.
console.error("usage: deno task roles grant|revoke <email> <role> | list");
Deno.exit(2);
