import { eraseFiles, fileItem, listFiles } from "../files/files.ts";
import type { AccountPart } from "./_part.ts";

/** What the files area holds of an account: stored files. */
export const filesPart: AccountPart = {
  name: "files",
  sections: {
    files: {
      what: "Your stored files: name, label, type, size, SHA-256 of the bytes, and the " +
        "address to download them from (the bytes are not copied into this file)",
      kept: "Until you delete them or erase the account",
    },
  },
  async export(deps, account) {
    const files = await listFiles(deps.kv, account.id);
    return {
      files: files.map((f) => {
        const item = fileItem(f);
        return { ...item, address: `${deps.config.baseUrl}${item.url}`, sha256: f.sha256 };
      }),
    };
  },
  async erase(deps, account) {
    await eraseFiles(deps.kv, account.id, deps.clock.now());
    return {};
  },
  async counts(deps, account) {
    return { files: (await listFiles(deps.kv, account.id)).length };
  },
};
