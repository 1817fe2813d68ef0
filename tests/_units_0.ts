import { importUnits } from "./_units.ts";

await importUnits(0);
