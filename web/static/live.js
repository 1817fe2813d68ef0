// Live pages: an element with data-live names the address of the page's version (same origin);
// when it differs from the page's data-version, the page is fetched again and each
// [data-live-part] element is replaced by its new copy, so no reload and no lost scroll. Without
// script the page is whole; reloading it shows the same.

const live = document.querySelector("[data-live]");
const said = document.createElement("p");
said.className = "visually-hidden";
said.setAttribute("role", "status");
document.querySelector("main")?.append(said);

async function refresh(version) {
  const url = new URL(location.href);
  url.searchParams.set("live", version);
  const res = await fetch(url, { credentials: "same-origin", cache: "no-store" });
  if (!res.ok) return;
  const doc = new DOMParser().parseFromString(await res.text(), "text/html");
  for (const part of document.querySelectorAll("[data-live-part][id]")) {
    const fresh = doc.getElementById(part.id);
    if (fresh) part.replaceWith(document.importNode(fresh, true));
  }
  live.dataset.version = version;
  document.dispatchEvent(new CustomEvent("parts-replaced"));
  said.textContent = "Updated: a state changed.";
}

// Polled while the page is shown: a hidden tab asks nothing until it is seen again.
const POLL_MS = 5000;
async function poll() {
  if (document.hidden) return;
  const res = await fetch(live.dataset.live, { credentials: "same-origin" });
  if (!res.ok) return;
  const { version } = await res.json();
  if (version && version !== live.dataset.version) await refresh(version);
}
if (live) {
  setInterval(() => poll().catch(() => {}), POLL_MS);
  document.addEventListener("visibilitychange", () => poll().catch(() => {}));
}

// Beat bars: one tab stop each; the arrow keys move along the results, each one's time and
// result shown beside it (and read out: each bar is labelled).
const tip = document.createElement("div");
tip.className = "tip";
tip.hidden = true;
tip.setAttribute("aria-hidden", "true");
document.body.append(tip);

function show(rect) {
  tip.textContent = rect.getAttribute("aria-label");
  tip.hidden = false;
  const box = rect.getBoundingClientRect();
  tip.style.left = `${Math.max(4, Math.min(innerWidth - 260, box.left + scrollX - 20))}px`;
  tip.style.top = `${box.bottom + scrollY + 6}px`;
}

document.addEventListener("focusin", (e) => {
  if (e.target.matches?.("svg.beats rect[aria-label]")) show(e.target);
});
document.addEventListener("focusout", () => (tip.hidden = true));
document.addEventListener("keydown", (e) => {
  const rect = e.target;
  if (!rect.matches?.("svg.beats rect[aria-label]")) return;
  const bars = [...rect.parentNode.querySelectorAll("rect[aria-label]")];
  let i = bars.indexOf(rect);
  if (e.key === "ArrowLeft") i--;
  else if (e.key === "ArrowRight") i++;
  else if (e.key === "Home") i = 0;
  else if (e.key === "End") i = bars.length - 1;
  else return;
  e.preventDefault();
  const next = bars[Math.max(0, Math.min(bars.length - 1, i))];
  rect.setAttribute("tabindex", "-1");
  next.setAttribute("tabindex", "0");
  next.focus();
});
