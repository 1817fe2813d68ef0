/**
 * Shell lines of other products' documentation, run verbatim by `sh`: each placeholder (the
 * docs' PING_URL, SITE_ROOT, a key) is replaced by this test's value, nothing else. The PATH
 * holds the system's curl and sh and a `uuidgen` (not installed here).
 */

let toolDir: Promise<string> | null = null;

/** A directory with `uuidgen`, made once per test process (removed with the process's temp). */
function tools(): Promise<string> {
  return toolDir ??= (async () => {
    const dir = await Deno.makeTempDir({ prefix: "hc_tools_" });
    await Deno.writeTextFile(`${dir}/uuidgen`, "#!/bin/sh\ncat /proc/sys/kernel/random/uuid\n");
    await Deno.chmod(`${dir}/uuidgen`, 0o755);
    addEventListener("unload", () => Deno.removeSync(dir, { recursive: true }));
    return dir;
  })();
}

/** Runs a script with its placeholders replaced; answers its exit code and output. */
export async function sh(script: string, vars: Record<string, string>) {
  let text = script;
  for (const [k, v] of Object.entries(vars)) text = text.replaceAll(k, v);
  const out = await new Deno.Command("sh", {
    args: ["-c", text],
    env: { PATH: `${await tools()}:/usr/local/bin:/usr/bin:/bin` },
    stdout: "piped",
    stderr: "piped",
  }).output();
  return {
    code: out.code,
    stdout: new TextDecoder().decode(out.stdout),
    stderr: new TextDecoder().decode(out.stderr),
  };
}
