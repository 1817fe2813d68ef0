// Small enhancements for every page; each page works without them.

// Copy buttons: <button type="button" data-copy="#element-id">Copy</button>
for (const button of document.querySelectorAll("button[data-copy]")) {
  button.hidden = false;
  button.addEventListener("click", async () => {
    const source = document.querySelector(button.dataset.copy);
    if (!source) return;
    const text = "value" in source ? source.value : source.textContent;
    try {
      await navigator.clipboard.writeText(text ?? "");
      const label = button.textContent;
      button.textContent = "Copied";
      setTimeout(() => (button.textContent = label), 1500);
    } catch {
      if (source.select) source.select();
    }
  });
}

// Confirm dialogs: <form data-confirm="Delete this file?"> asks before it is sent.
for (const form of document.querySelectorAll("form[data-confirm]")) {
  form.addEventListener("submit", (event) => {
    if (!confirm(form.dataset.confirm)) event.preventDefault();
  });
}

// A time zone field still at its default (UTC) offers the browser's own zone.
for (const input of document.querySelectorAll("input[data-zone-default]")) {
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  if (zone && input.value === "UTC") input.value = zone;
}

// A form shown again with errors: focus its summary so keyboard and screen reader users hear it.
document.getElementById("errors")?.focus();

// Times in the reader's zone: <time data-ago> reads "3 minutes ago" with the exact local time
// on hover, kept current; <time data-local> shows the exact local time.
const exact = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });
// A chart's time axis: a time of day, or a date.
const hourOf = new Intl.DateTimeFormat(undefined, {
  hour: "2-digit",
  minute: "2-digit",
  hourCycle: "h23",
});
const dayOf = new Intl.DateTimeFormat(undefined, { month: "short", day: "numeric" });
// The server's steps and words (lib/display.ts `agoText`), counted on the first rewrite from the
// moment the server wrote them (`data-ago`): it says the same, so nothing moves once it is shown,
// however long the page took to arrive.
const relative = new Intl.RelativeTimeFormat(undefined, { numeric: "always" });
const STEPS = [[45 * 60, 60, "minute"], [22 * 3600, 3600, "hour"], [Infinity, 86400, "day"]];
function ago(ms, now) {
  const s = (ms - now) / 1000;
  if (Math.abs(s) < 45) return "just now";
  const [, size, unit] = STEPS.find(([limit]) => Math.abs(s) < limit);
  const n = Math.max(1, Math.round(Math.abs(s) / size));
  return relative.format(s < 0 ? -n : n, unit);
}
function localTimes(root = document) {
  for (const t of root.querySelectorAll("time[data-ago], time[data-local]")) {
    const ms = Date.parse(t.getAttribute("datetime") ?? "");
    if (Number.isNaN(ms)) continue;
    if (t.hasAttribute("data-ago")) {
      t.title = exact.format(ms);
      t.textContent = ago(ms, Number(t.dataset.ago) || Date.now());
      t.dataset.ago = "";
    } else t.textContent = exact.format(ms);
  }
  for (const t of root.querySelectorAll("text[data-tick][data-at]")) {
    t.textContent = (t.dataset.tick === "hour" ? hourOf : dayOf).format(Number(t.dataset.at));
  }
  for (const z of root.querySelectorAll("[data-zone]")) z.textContent = "your time zone";
  for (const r of root.querySelectorAll("rect[data-at][aria-label]")) {
    const ms = Number(r.dataset.at);
    const label = r.getAttribute("aria-label").replace(/^.*? UTC/, exact.format(ms));
    r.setAttribute("aria-label", label);
    const title = r.querySelector("title");
    if (title) title.textContent = label;
  }
}
localTimes();
setInterval(() => localTimes(), 30_000);
document.addEventListener("parts-replaced", () => localTimes());
