/**
 * What the process-wide caches of lib/ earn (docs/performance.md, "Process-wide caches"): each
 * path's CPU a call with its cache, against the same work done without it, in this process.
 * Without the cache means what the code would do on every call: an OnCalendar expression
 * parsed, an `Intl.DateTimeFormat` made for a zone, the sealing key derived from SECRETS_KEY
 * (SHA-256 and a key import). Exits 1 when a cache earns
 * less than GOAL times: then it is not worth its invariant.
 *
 *   deno run -A --lock=deno.dev.lock bench/caches.ts
 */
import { cpuMs } from "./_cpu.ts";
import { parseOnCalendar, zoneFormatter } from "../lib/oncalendar.ts";
import { sealingKey, sealSecret, unsealSecret } from "../lib/secrets.ts";

/** The least a cache must save, as a ratio of the uncached call's CPU to the cached one's. */
const GOAL = 2;

/** Median CPU µs a call of `fn` over five runs of `n` calls, after one unmeasured run. */
async function perCall(n: number, fn: (i: number) => unknown): Promise<number> {
  const runs: number[] = [];
  for (let r = 0; r <= 5; r++) {
    const t0 = cpuMs();
    for (let i = 0; i < n; i++) await fn(r * n + i);
    if (r > 0) runs.push(((cpuMs() - t0) * 1000) / n);
  }
  return runs.sort((a, b) => a - b)[2];
}

const at = Date.UTC(2026, 11, 2, 12, 0, 0);
const calendar = "Mon..Fri *-*-* 09..17:00/5:00 Europe/Paris";
const material = "a secrets key of the owner's, long enough";
const sealed = await sealSecret(await sealingKey(material), "a provider's token", "channel 1");

const cachedFormatter = zoneFormatter("Europe/Paris");
function wallParts(f: Intl.DateTimeFormat, t: number): number {
  return f.formatToParts(new Date(t)).length;
}

const rows: [string, number, number][] = [
  [
    "lib/oncalendar.ts `cache` (an expression parsed)",
    await perCall(500_000, () => parseOnCalendar(calendar)),
    // A new string each call (trailing spaces, which the parser trims) misses the cache.
    await perCall(500, (i) => parseOnCalendar(calendar + " ".repeat(1 + i))),
  ],
  [
    "lib/oncalendar.ts `formatters` (a zone's wall clock)",
    await perCall(20_000, (i) => wallParts(cachedFormatter, at + i * 1000)),
    await perCall(2_000, (i) => wallParts(zoneFormatter("Europe/Paris"), at + i * 1000)),
  ],
  [
    "lib/secrets.ts `keys` (a sealed value opened)",
    await perCall(2_000, async () => unsealSecret(await sealingKey(material), sealed, "channel 1")),
    await perCall(500, async () => unsealSecret(await deriveKey(material), sealed, "channel 1")),
  ],
];

/** lib/secrets.ts `sealingKey` without its map. */
async function deriveKey(secret: string): Promise<CryptoKey> {
  const raw = await crypto.subtle.digest(
    "SHA-256",
    new TextEncoder().encode(`channel secrets\0${secret}`),
  );
  return await crypto.subtle.importKey("raw", raw, "AES-GCM", false, ["encrypt", "decrypt"]);
}

let missed = false;
console.log("| cache | with it, µs a call | without it | ratio |\n|---|---|---|---|");
for (const [name, cached, uncached] of rows) {
  const ratio = uncached / cached;
  if (ratio < GOAL) missed = true;
  console.log(`| ${name} | ${cached.toFixed(1)} | ${uncached.toFixed(1)} | ${ratio.toFixed(1)}x |`);
}
if (missed) console.error(`a cache earns less than ${GOAL}x: it is not worth keeping`);
Deno.exit(missed ? 1 : 0);
