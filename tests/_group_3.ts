import { importGroup } from "./_groups.ts";

await importGroup(3);
