// Holds a KV file open, as a running server does, until its standard input closes.
const kv = await Deno.openKv(Deno.args[0]);
await kv.get(["anything"]);
console.log("ready");
for await (const _ of Deno.stdin.readable) { /* wait for EOF */ }
kv.close();
