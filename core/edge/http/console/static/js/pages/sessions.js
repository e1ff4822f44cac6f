// Sessions: filtered by kind, channel and agent, searched by key, label or name
// (GET /api/sessions); each row links to its transcript and send policy.
import { enc, get, invoke } from "../api.js";
import { setParams } from "../nav.js";
import { badge, h, money, num, select, table, when } from "../dom.js";

const KINDS = ["main", "group", "cron", "hook", "node", "other"];

export function policyBadge(p) {
  const b = badge(p.state, p.state);
  b.title = p.reason;
  return b;
}

let searchable = null;  // sessions_search (D66) is served: null = not asked yet
/** Messages matching `q` through the sessions_search tool, when the gateway has it (D66). */
async function messages(q) {
  if (!q || searchable === false) return null;
  try {
    const found = await invoke("sessions_search", { query: q, limit: 20 });
    searchable = true;
    return found;
  } catch (err) {
    if (err.status === 404) { searchable = false; return null; }
    throw err;
  }
}

export async function render(view, params) {
  const overview = await get("api/overview");
  const channels = [...new Set(overview.channels.map(c => c.channel))];
  const list = h("div", { id: "session-list" });
  let timer = null;

  const update = (name, value) => {
    if (value) params.set(name, value); else params.delete(name);
    params.delete("key");
    setParams("sessions", params);
    refresh();
  };
  const search = h("input", { type: "search", name: "q", placeholder: "Search key, label or name",
    "aria-label": "Search sessions", value: params.get("q") || "",
    oninput: (e) => { clearTimeout(timer); timer = setTimeout(() => update("q", e.target.value.trim()), 250); } });
  view.append(
    h("h1", {}, "Sessions"),
    h("div", { class: "filters" },
      search,
      select("kind", "Kind", [["", "All kinds"], ...KINDS.map(k => [k, k])], params.get("kind") || "", v => update("kind", v)),
      select("channel", "Channel", [["", "All channels"], ...channels.map(c => [c, c])], params.get("channel") || "", v => update("channel", v)),
      select("agent", "Agent", [["", "All agents"], ...overview.agents.map(a => [a, a])], params.get("agent") || "", v => update("agent", v))),
    list);

  async function refresh() {
    const query = new URLSearchParams({ limit: "200" });
    for (const name of ["q", "kind", "channel", "agent"]) {
      if (params.get(name)) query.set(name, params.get(name));
    }
    const [data, found] = await Promise.all([get(`api/sessions?${query}`),
      messages(params.get("q"))]);
    list.replaceChildren(
      h("p", { class: "muted small" }, `${data.count} session${data.count === 1 ? "" : "s"}` +
        (data.count === 200 ? " (the newest 200: narrow the filters)" : "")),
      table([
        { label: "Session", value: s => h("a", { href: `#session/${enc(s.sessionKey)}`, class: "mono" },
          s.displayName && s.displayName !== s.key ? `${s.displayName} · ${s.key}` : s.key) },
        { label: "Kind", value: s => s.kind },
        { label: "Channel", value: s => s.channel },
        { label: "Agent", value: s => s.agentId },
        { label: "Send policy", value: s => policyBadge(s.effectiveSendPolicy) },
        { label: "Tokens", value: s => num(s.totalTokens), num: true },
        { label: "Cost", value: s => money(s.costUsd), num: true },
        { label: "Updated", value: s => when(s.updatedAt) },
      ], data.sessions, {
        empty: "No session matches.",
        onRow: s => { location.hash = `#session/${enc(s.sessionKey)}`; },
        rowAttrs: s => ({ dataset: { key: s.sessionKey } }),
      }),
      found ? [h("h2", {}, `Messages matching (${found.count})`), table([
        { label: "Session", value: m => h("a", { href: `#session/${enc(m.sessionKey)}`,
          class: "mono" }, m.sessionKey) },
        { label: "Who", value: m => m.role },
        { label: "When", value: m => when(m.timestamp) },
        { label: "Excerpt", value: m => m.excerpt },
      ], found.results, { empty: "No message matches.",
                          rowAttrs: m => ({ dataset: { key: m.sessionKey } }) })] : null);
  }

  await refresh();
  return { topics: ["sessions"], refresh };
}
