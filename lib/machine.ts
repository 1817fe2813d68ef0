import { z } from "zod";
import type { Config } from "./config.ts";

/**
 * The owner's machine snapshot: a JSON file another program on the server writes
 * (MACHINE_SNAPSHOT). It is read on each request, so a new snapshot shows at once; a
 * missing or malformed file reads as null rather than failing the listing.
 */

const text = (max: number) => z.string().max(max).catch("");

const SnapshotSchema = z.object({
  host: text(200),
  read: text(64),
  services: z.array(z.object({
    group: text(80),
    name: text(120),
    what: text(200),
    where: text(200),
    state: text(20),
    status: text(200),
    flag: z.union([z.string().max(40), z.boolean(), z.null()]).catch(null),
  })).max(500),
});

export type Snapshot = z.infer<typeof SnapshotSchema>;

export async function readSnapshot(config: Config): Promise<Snapshot | null> {
  if (!config.machineSnapshot) return null;
  try {
    const raw = await Deno.readTextFile(config.machineSnapshot);
    const parsed = SnapshotSchema.safeParse(JSON.parse(raw));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}
