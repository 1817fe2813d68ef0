/**
 * The real server as a child process, for end-to-end tests and the benchmarks. It runs with
 * the permissions of `deno task start` (read from deno.json), on 127.0.0.1 and an ephemeral
 * port, over the KV file it is given. Every CONTRACT.md variable not given is blanked, so an
 * operator's SMTP_URL in the environment is never used by a test.
 */

export const ROOT = new URL("..", import.meta.url).pathname;

const CONTRACT_VARS = [
  "PORT",
  "HOSTNAME",
  "KV_PATH",
  "BASE_URL",
  "SMTP_URL",
  "MAIL_API_URL",
  "MAIL_API_KEY",
  "MAIL_FROM",
  "TEAM_INBOX",
  "REPORT_INBOX",
  "SERVICE_TOKEN",
  "TRUST_PROXY",
  "MACHINE_SNAPSHOT",
  "CATALOGUE_FILE",
  "LOG_LEVEL",
  "METRICS_TOKEN",
  "TEST_CLOCK_FILE",
  "SECRETS_KEY",
  "CHANNEL_NETWORKS",
  "TEST_PROVIDER_ORIGIN",
];

/** The arguments `deno task <name>` passes to deno, so children run as the task would. */
export async function taskArgs(name: string): Promise<string[]> {
  const config = JSON.parse(await Deno.readTextFile(`${ROOT}deno.json`));
  const words = String(config.tasks[name]).split(/\s+/);
  if (words[0] !== "deno") throw new Error(`task ${name} does not start with deno`);
  return words.slice(1);
}

/** Every CONTRACT.md variable blanked, then the given ones. */
export function serverEnv(env: Record<string, string>): Record<string, string> {
  return { ...Object.fromEntries(CONTRACT_VARS.map((k) => [k, ""])), ...env };
}

export interface OutputLog {
  /** Everything read so far. */
  readonly text: string;
  /** Resolves with the first match of `re` in the output, waiting up to `ms`. */
  waitFor(re: RegExp, ms?: number): Promise<RegExpMatchArray>;
  /** Resolves when the stream ends. */
  done: Promise<void>;
}

export function collect(stream: ReadableStream<Uint8Array>): OutputLog {
  let text = "";
  const waiters = new Set<() => void>();
  const done = (async () => {
    for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
      text += chunk;
      for (const w of waiters) w();
    }
    for (const w of waiters) w();
  })();
  let ended = false;
  done.finally(() => ended = true);
  return {
    get text() {
      return text;
    },
    done,
    waitFor(re, ms = 20_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const m = text.match(re);
          if (m) {
            finish();
            resolve(m);
          } else if (ended) {
            finish();
            reject(new Error(`output ended without ${re}`));
          }
        };
        const timer = setTimeout(() => {
          finish();
          reject(new Error(`no ${re} within ${ms} ms`));
        }, ms);
        const finish = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      });
    },
  };
}

export interface ServerProcess extends AsyncDisposable {
  /** http://127.0.0.1:<port> */
  url: string;
  pid: number;
  stdout: OutputLog;
  stderr: OutputLog;
  /** Milliseconds from spawn to the "listening on" line. */
  listenedAfter: number;
  /** Resolves when the process has exited. */
  status: Promise<Deno.CommandStatus>;
  stop(): Promise<void>;
}

/**
 * Spawns `args` (a deno command line) and waits for the "listening on http://HOST:PORT" line.
 * The child is killed by `stop()` / `await using`, and also when start-up fails.
 */
export async function spawnListening(
  args: string[],
  env: Record<string, string>,
): Promise<ServerProcess> {
  const started = performance.now();
  const child = new Deno.Command(Deno.execPath(), {
    args,
    cwd: ROOT,
    env,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const stdout = collect(child.stdout);
  const stderr = collect(child.stderr);
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    try {
      child.kill("SIGKILL");
    } catch { /* already gone */ }
    await child.status;
    await Promise.all([stdout.done, stderr.done]);
  };
  try {
    const m = await Promise.race([
      stdout.waitFor(/listening on http:\/\/([^\s:]+|\[[^\]]+\]):(\d+)/, 60_000),
      child.status.then((s) => {
        throw new Error(`server exited with ${s.code}: ${stderr.text.slice(-2000)}`);
      }),
    ]);
    const listenedAfter = performance.now() - started;
    return {
      url: `http://127.0.0.1:${m[2]}`,
      pid: child.pid,
      stdout,
      stderr,
      listenedAfter,
      status: child.status,
      stop,
      [Symbol.asyncDispose]: stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** The service itself (main.ts) on 127.0.0.1, an ephemeral port and the given KV file. */
export async function spawnService(
  kvPath: string,
  env: Record<string, string> = {},
): Promise<ServerProcess> {
  const args = [...await taskArgs("start")];
  return await spawnListening(
    args,
    serverEnv({ PORT: "0", HOSTNAME: "127.0.0.1", KV_PATH: kvPath, ...env }),
  );
}

/** Runs `deno task <name> ...` the way an operator would; answers code and output. */
export async function runTask(
  name: string,
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["task", "-q", name, ...args],
    cwd: ROOT,
    env: serverEnv(env),
    stdin: "null",
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}
