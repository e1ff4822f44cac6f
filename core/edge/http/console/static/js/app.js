// The console's shell: pages by URL hash (the token is never in a URL, D79), the theme,
// and live updates from GET /api/events (D183).
import { get } from "./api.js";
import { h } from "./dom.js";
import { parseHash } from "./nav.js";
import * as access from "./pages/access.js";
import * as config from "./pages/config.js";
import * as cron from "./pages/cron.js";
import * as deliveries from "./pages/deliveries.js";
import * as overview from "./pages/overview.js";
import * as session from "./pages/session.js";
import * as sessions from "./pages/sessions.js";
import * as usage from "./pages/usage.js";

const PAGES = { overview, sessions, session, deliveries, access, cron, usage, config };
const NAV = { session: "sessions" };
const main = document.getElementById("main");
let current = null;
let generation = 0;

async function route() {
  const [name, params] = parseHash(location.hash, Object.keys(PAGES));
  const mine = ++generation;
  document.querySelectorAll("#nav a").forEach(a => {
    if (a.dataset.page === (NAV[name] || name)) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  });
  document.body.dataset.page = name;
  delete document.body.dataset.ready;
  const view = h("div", { class: "page", dataset: { page: name } });
  main.replaceChildren(view);
  try {
    const page = await PAGES[name].render(view, params);
    if (mine !== generation) return;
    current = page;
  } catch (err) {
    if (mine !== generation) return;
    current = null;
    if (err.status !== 401) view.append(h("p", { class: "problem" }, err.message || String(err)));
  }
  document.body.dataset.ready = name;
}

// ---- theme: follows the system until chosen; the choice stays in this browser -----------
const THEMES = ["auto", "light", "dark"];
function applyTheme(theme) {
  if (theme === "auto") delete document.documentElement.dataset.theme;
  else document.documentElement.dataset.theme = theme;
  const button = document.getElementById("theme");
  button.textContent = { auto: "Theme: auto", light: "Theme: light", dark: "Theme: dark" }[theme];
}
function setupTheme() {
  let theme = localStorage.getItem("crosstalk-console-theme") || "auto";
  if (!THEMES.includes(theme)) theme = "auto";
  applyTheme(theme);
  document.getElementById("theme").addEventListener("click", () => {
    theme = THEMES[(THEMES.indexOf(theme) + 1) % THEMES.length];
    localStorage.setItem("crosstalk-console-theme", theme);
    applyTheme(theme);
  });
}

// ---- live updates ------------------------------------------------------------------------
let refreshing = null;
let again = false;
/** Read the page's lists again; changes that arrive meanwhile make one more read, not many. */
function refreshCurrent() {
  if (refreshing) { again = true; return; }
  refreshing = current.refresh().catch(() => {}).finally(() => {
    refreshing = null;
    if (again) {
      again = false;
      if (current && current.refresh) refreshCurrent();
    }
  });
}

async function pendingCount() {
  try {
    const state = await get("api/pairing");
    const el = document.getElementById("pending-count");
    el.textContent = String(state.requests.length);
    el.hidden = state.requests.length === 0;
  } catch { /* shown again at the next change */ }
}

function setupLive() {
  const dot = document.getElementById("live");
  const source = new EventSource("api/events");
  source.addEventListener("ready", () => {
    dot.classList.add("on");
    dot.title = "Live updates: on";
    document.body.dataset.live = "on";
  });
  source.addEventListener("change", (event) => {
    const topics = JSON.parse(event.data).topics || [];
    if (topics.includes("pairing")) pendingCount();
    if (current && current.refresh && topics.some(t => (current.topics || []).includes(t))) {
      refreshCurrent();
    }
  });
  source.addEventListener("signed-out", () => location.reload());
  source.addEventListener("error", () => {
    dot.classList.remove("on");
    dot.title = "Live updates: reconnecting";
    document.body.dataset.live = "off";
    if (source.readyState === EventSource.CLOSED) {  // refused (signed out?): ask the API
      get("api/pairing").then(() => setTimeout(setupLive, 5000), () => {});
    }
  });
}

setupTheme();
window.addEventListener("hashchange", route);
route();
pendingCount();
setupLive();
