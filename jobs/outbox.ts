import { retryPosts, sealLegacyChannels } from "../kv/channels.ts";
import { retryOutbox } from "../kv/outbox.ts";
import type { Deps } from "../lib/deps.ts";

/** Minutely: delivers mail and webhook posts whose earlier attempt failed, with backoff. */
export const outboxJob = async (deps: Deps) => {
  await sealLegacyChannels(deps);
  const [mail, posts] = await Promise.all([retryOutbox(deps), retryPosts(deps)]);
  return { ...mail, posts };
};
