/**
 * The moves a reviewer's page offers (kv/catalogue/proposal_changes.ts `movesOf`) are exactly those the
 * API accepts: for every state a proposal can be in, every team caller (a reviewer, the owner,
 * the service token) and every status the API takes, a change succeeds if and only if it was
 * offered without a block, and a refused one changes nothing.
 */
import assert from "node:assert/strict";
import type { Caller } from "../kv/accounts/caller.ts";
import { gateOf } from "../kv/catalogue/gate.ts";
import { changeProposal, MOVES, movesOf } from "../kv/catalogue/proposal_changes.ts";
import { createProposal, getProposal, type ProposalStatus } from "../kv/catalogue/proposals.ts";
import { proposal } from "./_forms_fixtures.ts";
import { testApp } from "./_helpers.ts";

const TARGETS = ["reviewing", "admitted", "rejected", "published", "withdrawn"] as const;

/** The path from confirmed to each state, through the owner. */
const PATHS: Record<string, (typeof TARGETS[number])[]> = {
  confirmed: [],
  reviewing: ["reviewing"],
  admitted: ["reviewing", "admitted"],
  rejected: ["rejected"],
  published: ["reviewing", "published"],
  withdrawn: ["withdrawn"],
};

Deno.test("review moves: offered on the page if and only if the API accepts them", async () => {
  await using t = await testApp();
  const sub = await t.account("sub@example.org", { name: "Sub" });
  const rev = await t.account("rev@example.org", { name: "Rev", roles: ["reviewer"] });
  const own = await t.account("own@example.org", { name: "Own", roles: ["owner"] });
  const callers: [string, Caller][] = [
    ["reviewer", { account: rev.account, team: "account", fresh: true }],
    ["owner", { account: own.account, team: "account", fresh: true }],
    ["service", { account: null, team: "service", fresh: true }],
  ];
  const ownerCaller = callers[1][1];
  const subCaller: Caller = { account: sub.account, team: null, fresh: true };
  let n = 0;
  let offeredSeen = 0;
  for (const [state, path] of Object.entries(PATHS)) {
    for (const [who, caller] of callers) {
      for (const target of TARGETS) {
        // Each case on a proposal of its own, brought to `state`; a title of its own keeps
        // each one's module slug free.
        const { proposal: p } = await createProposal(
          t.deps,
          proposal({ email: sub.account.email, title: `Case number ${++n}` }) as never,
          {
            trail: "",
            records: [],
            chain: null,
            verdict: { sent: false, ok: true, detail: "", count: 0 },
          },
          sub.account,
          `account:${sub.account.id}`,
        );
        for (const step of path) {
          await changeProposal(t.deps, step === "withdrawn" ? subCaller : ownerCaller, p.id, {
            status: step,
            reason: "Because so.",
          });
        }
        const before = (await getProposal(t.kv, p.id)).value!;
        assert.equal(before.status, state as ProposalStatus);
        const offered = movesOf(caller, before, await gateOf(t.kv, before))
          .filter((o) => o.blocked === null && o.move.to === target);
        let accepted = true;
        try {
          await changeProposal(t.deps, caller, p.id, { status: target, reason: "Because so." });
        } catch {
          accepted = false;
        }
        const what = `${who}: ${state} -> ${target}`;
        assert.equal(accepted, offered.length === 1, what);
        if (accepted) offeredSeen++;
        else assert.deepEqual((await getProposal(t.kv, p.id)).value, before, `${what} changed it`);
      }
    }
  }
  // The walk met every team move at least once (it would pass on a table that offers nothing).
  assert.ok(offeredSeen >= MOVES.filter((m) => m.who !== "submitter").length, `${offeredSeen}`);
});

Deno.test("review moves: in the workflow's order, each reason rule as the API applies it", () => {
  assert.deepEqual(MOVES.map((m) => m.name), [
    "review",
    "admit",
    "reject",
    "publish",
    "take-back",
    "withdraw",
  ]);
  assert.deepEqual(MOVES.filter((m) => m.reason).map((m) => m.name), [
    "admit",
    "reject",
    "withdraw",
  ]);
});
