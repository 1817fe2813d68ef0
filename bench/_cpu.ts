/**
 * A process's CPU time (user + system) from /proc/<pid>/stat: the figure the benchmarks divide
 * by the requests answered. /proc counts in ticks of 10 ms (USER_HZ is 100 on Linux), so runs
 * are long and the figure is a median.
 */

/** Milliseconds in one /proc tick. */
export const TICK_MS = 10;

/** utime + stime of a /proc/<pid>/stat text, in ticks. */
function ticksOf(stat: string): number {
  // Fields after the command name (which may hold spaces) start at field 3.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return Number(fields[11]) + Number(fields[12]);
}

/** Another process's CPU time, in ticks. */
export async function cpuTicks(pid: number): Promise<number> {
  return ticksOf(await Deno.readTextFile(`/proc/${pid}/stat`));
}

/** This process's CPU time, in milliseconds (for in-process measures). */
export function cpuMs(): number {
  return ticksOf(Deno.readTextFileSync("/proc/self/stat")) * TICK_MS;
}
