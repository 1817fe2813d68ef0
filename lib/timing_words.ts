/**
 * A service's timing in words, as a person says it: "every 5 minutes", "every day at 03:00
 * Europe/Berlin", "30 minutes' grace". Pure: the dashboard's row and a service's page read
 * the same sentence. A cron line that none of the common forms fits reads as itself.
 */

const DAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];
const DAY_NAMES: Record<string, number> = {
  sun: 0,
  mon: 1,
  tue: 2,
  wed: 3,
  thu: 4,
  fri: 5,
  sat: 6,
};

const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? "" : "s"}`;

/** "90 seconds", "5 minutes", "1 hour", "2 hours 30 minutes", "7 days". */
export function durationWords(seconds: number): string {
  const s = Math.round(seconds);
  if (s < 60 || s % 60 !== 0 && s < 3600) return plural(s, "second");
  const m = Math.round(s / 60);
  if (m < 60) return plural(m, "minute");
  if (m % (24 * 60) === 0) return plural(m / (24 * 60), "day");
  if (m % 60 === 0) return plural(m / 60, "hour");
  if (m < 24 * 60) return `${plural(Math.floor(m / 60), "hour")} ${plural(m % 60, "minute")}`;
  return plural(Math.round(m / 60), "hour");
}

/** "every 5 minutes", "every hour", "every day", "every 2 hours". */
export function everyWords(seconds: number): string {
  const d = durationWords(seconds);
  return /^1 \w+$/.test(d) ? `every ${d.slice(2)}` : `every ${d}`;
}

/** "30 minutes' grace", "1 hour's grace". */
export function graceWords(seconds: number): string {
  const d = durationWords(seconds);
  return `${d}${d.endsWith("s") ? "'" : "'s"} grace`;
}

const int = (f: string, max: number) => /^\d{1,2}$/.test(f) && Number(f) <= max ? Number(f) : null;

const list = (xs: string[]) =>
  xs.length <= 1 ? xs.join("") : `${xs.slice(0, -1).join(", ")} and ${xs.at(-1)}`;

function dayOfWeek(f: string): number | null {
  const n = int(f, 7);
  if (n !== null) return n % 7;
  return DAY_NAMES[f.toLowerCase()] ?? null;
}

function weekdays(f: string): string | null {
  if (f === "*") return "every day";
  if (f === "1-5" || f.toLowerCase() === "mon-fri") return "every weekday";
  if (f === "0,6" || f === "6,0" || f.toLowerCase() === "sat,sun") return "every weekend day";
  const days = f.split(",").map(dayOfWeek);
  if (days.some((d) => d === null)) return null;
  return `every ${list(days.map((d) => DAYS[d!]))}`;
}

/**
 * A five-field cron line in words ("every day at 03:00", "every Monday at 08:30", "every
 * 15 minutes"), with its time zone; another schedule (an OnCalendar expression, a cron line
 * of steps and ranges) as `on the schedule "…"`.
 */
export function scheduleWords(cron: string, tz: string): string {
  const zone = ` ${tz}`;
  const quoted = `on the schedule "${cron.trim().split("\n").join("; ")}"${zone}`;
  const f = cron.trim().split(/\s+/);
  if (f.length !== 5 || cron.includes("\n")) return quoted;
  const [min, hour, dom, mon, dow] = f;
  if (mon !== "*") return quoted;
  if (dom === "*" && dow === "*") {
    if (min === "*" && hour === "*") return "every minute";
    const step = /^\*\/(\d{1,2})$/.exec(min);
    if (step && hour === "*") return `every ${plural(Number(step[1]), "minute")}`;
    const m = int(min, 59);
    if (m !== null && hour === "*") return `every hour at minute ${m}`;
    const hstep = /^\*\/(\d{1,2})$/.exec(hour);
    if (m !== null && hstep) {
      return `every ${plural(Number(hstep[1]), "hour")} at minute ${m}${zone}`;
    }
  }
  const m = int(min, 59);
  const hours = hour.split(",").map((h) => int(h, 23));
  if (m === null || hours.some((h) => h === null)) return quoted;
  const at = `at ${
    list(hours.map((h) => `${String(h).padStart(2, "0")}:${String(m).padStart(2, "0")}`))
  }`;
  if (dom === "*") {
    const days = weekdays(dow);
    return days ? `${days} ${at}${zone}` : quoted;
  }
  const d = int(dom, 31);
  if (d === null || dow !== "*") return quoted;
  return `on day ${d} of every month ${at}${zone}`;
}

/** What a timing reads from: a service's view (kv/service/state.ts serviceView). */
export interface TimingOf {
  kind: string;
  interval: number;
  schedule: string | null;
  tz: string | null;
  period_seconds: number | null;
  grace_seconds: number | null;
}

/** When a service is looked at or expected: "every 5 minutes", "every day at 03:00 UTC". */
export function periodWords(v: TimingOf): string {
  if (v.schedule) return scheduleWords(v.schedule, v.tz ?? "UTC");
  return everyWords(v.period_seconds ?? v.interval * 60);
}

/**
 * The whole sentence of a heartbeat's timing, "every day at 03:00 Europe/Berlin, 30 minutes'
 * grace"; a checked service's "checked every 5 minutes".
 */
export function timingSentence(v: TimingOf): string {
  if (v.kind !== "webhook") return `checked ${periodWords(v)}`;
  const grace = v.grace_seconds !== null ? `, ${graceWords(v.grace_seconds)}` : "";
  return `${periodWords(v)}${grace}`;
}
