// Deliveries: the delivery log (GET /api/deliveries) by outcome, channel and session; each row
// shows the rule or override that decided it and every chunk's platform message id.
import { enc, get } from "../api.js";
import { setParams } from "../nav.js";
import { badge, h, select, table, when } from "../dom.js";

const OUTCOMES = ["delivered", "suppressed_by_policy", "failed", "rate_limited", "resent_after_crash"];

function chunks(d) {
  if (!d.chunks || !d.chunks.length) return h("span", { class: "muted" }, "no chunk sent");
  return h("ol", { class: "chunks", start: "0" }, d.chunks.map(c => h("li", { dataset: {
    state: c.state, platformMessageId: c.platformMessageId || "" } },
    badge(c.state, c.state === "sent" ? "ok" : c.state === "pending" ? "warn" : "bad"), " ",
    c.platformMessageId ? h("span", { class: "mono" }, `id ${c.platformMessageId}`)
      : h("span", { class: "muted" }, "no platform id"),
    c.reason ? ` · ${c.reason}` : "")));
}

export async function render(view, params) {
  const overview = await get("api/overview");
  const channels = [...new Set(overview.channels.map(c => c.channel))];
  const list = h("div", { id: "delivery-list" });
  const update = (name, value) => {
    if (value) params.set(name, value); else params.delete(name);
    setParams("deliveries", params);
    refresh();
  };
  const session = h("input", { type: "search", name: "session", placeholder: "Session key",
    "aria-label": "Session", value: params.get("session") || "",
    onchange: (e) => update("session", e.target.value.trim()) });
  view.append(
    h("h1", {}, "Deliveries"),
    h("div", { class: "filters" },
      select("outcome", "Outcome", [["", "All outcomes"], ...OUTCOMES.map(o => [o, o])],
        params.get("outcome") || "", v => update("outcome", v)),
      select("channel", "Channel", [["", "All channels"], ...channels.map(c => [c, c])],
        params.get("channel") || "", v => update("channel", v)),
      session),
    list);

  async function refresh() {
    const query = new URLSearchParams({ limit: "200" });
    for (const name of ["outcome", "channel", "session"]) {
      if (params.get(name)) query.set(name, params.get(name));
    }
    const data = await get(`api/deliveries?${query}`);
    list.replaceChildren(table([
      { label: "When", value: d => when(d.createdAt) },
      { label: "Outcome", value: d => badge(d.outcome) },
      { label: "Decided by", value: d => d.reason || "—" },
      { label: "Kind", value: d => d.kind },
      { label: "To", value: d => `${d.channel || "?"} → ${d.to || "?"}${d.threadId ? ` (thread ${d.threadId})` : ""}` },
      { label: "Session", value: d => d.sessionKey
        ? h("a", { href: `#session/${enc(d.sessionKey)}`, class: "mono" }, d.sessionKey) : "—" },
      { label: "Chunks", value: chunks },
      { label: "Text", value: d => h("details", {}, h("summary", {}, d.text.length > 60
        ? `${d.text.slice(0, 60)}…` : d.text), h("pre", {}, d.text)) },
    ], data.deliveries, {
      empty: "No delivery matches.",
      rowAttrs: d => ({ dataset: { id: d.id, outcome: d.outcome } }),
    }));
  }

  await refresh();
  return { topics: ["deliveries"], refresh };
}
