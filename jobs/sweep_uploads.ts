import { sweepUploads } from "../kv/files/files.ts";
import type { Deps } from "../lib/deps.ts";

/** Minutely: removes chunks of uploads that never completed and releases their quota. */
export const sweepUploadsJob = (deps: Deps) => sweepUploads(deps.kv, deps.clock.now());
