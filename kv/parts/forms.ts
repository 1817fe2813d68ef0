import { setModuleBy, unpublishModule } from "../catalogue/catalogue_api.ts";
import type { AccountPart } from "./_part.ts";
import {
  confirmReceived,
  detachSubmitter,
  eraseProposal,
  getData,
  proposalsOf,
  proposalView,
} from "../catalogue/proposals.ts";
import { eraseRequestsOf, requestsOfAddress, requestView } from "../forms/requests.ts";

/**
 * What the forms area holds of an account: the proposals and requests sent from its
 * address. Erasure decides per published proposal: `keep` leaves the module published under
 * the name (the proposal loses its address: kept); `remove` takes the name off the module,
 * and as the gate needs a name the module is taken back and the proposal goes
 * (unpublished); every unpublished proposal is deleted (deleted). Requests from the address
 * are deleted and not counted.
 */
export const formsPart: AccountPart = {
  name: "forms",
  sections: {
    proposals: {
      what: "Module proposals sent from your address, with their records, chain, the check " +
        "of the records and the team's decisions (who in the team decided is not included)",
      kept: "Not confirmed within seven days: deleted. Otherwise until you erase the account; " +
        "a published one then keeps or drops your name on the module as you decide",
    },
    requests: {
      what: "Requests sent from your address through the public form",
      kept: "180 days from sending, then deleted by the daily job",
    },
  },

  async export(deps, account) {
    const proposals = [];
    for (const p of await proposalsOf(deps.kv, account.email)) {
      proposals.push({
        ...proposalView(deps.config.baseUrl, p),
        records_check: { ...p.records },
        ...await getData(deps.kv, p.id),
      });
    }
    const requests = (await requestsOfAddress(deps.kv, account.email)).map(requestView);
    return { proposals, requests };
  },

  async erase(deps, account, decisions) {
    const actor = `account:${account.id}`;
    let kept = 0, unpublished = 0, deleted = 0;
    for (const p of await proposalsOf(deps.kv, account.email)) {
      if (p.status === "published" && p.slug) {
        const keep = decisions.keep.has(p.id)
          ? true
          : decisions.remove.has(p.id)
          ? false
          : p.attribution === "keep";
        if (keep) {
          await detachSubmitter(deps, p.id, account.email);
          kept++;
        } else {
          await setModuleBy(deps, p.slug, "", actor);
          await unpublishModule(deps, p.slug, actor);
          await eraseProposal(deps, p.id, account.email, actor);
          unpublished++;
        }
      } else if (await eraseProposal(deps, p.id, account.email, actor)) {
        deleted++;
      }
    }
    await eraseRequestsOf(deps.kv, account.email);
    return { kept, unpublished, deleted };
  },

  async counts(deps, account) {
    return { contributions: (await proposalsOf(deps.kv, account.email)).length };
  },

  async afterVerify(deps, account) {
    return { confirmed: await confirmReceived(deps, account) };
  },
};
