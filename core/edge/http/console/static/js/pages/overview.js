// Overview: channels with their state, holder, refused and duplicatesDropped (as /healthz),
// turns queued and running, failed deliveries in the last 24 h, the live processes.
import { enc, get } from "../api.js";
import { badge, fmtTime, h, num, table, when } from "../dom.js";

function stat(label, value, id, link, cls = "stat") {
  return h("div", { class: "card" }, h("div", { class: "muted small" }, label),
    h("div", { class: cls, id }, link ? h("a", { href: link }, value) : value));
}

export async function render(view) {
  const body = h("div");
  view.append(h("h1", {}, "Overview"), body);

  async function refresh() {
    const o = await get("api/overview");
    const failed = await get(`api/deliveries?outcome=failed&since=${o.failedSince}&limit=20`);
    body.replaceChildren(
      h("div", { class: "grid stats" },
        stat("Turns queued", num(o.queue.queued), "queue-queued"),
        stat("Turns running", num(o.queue.running), "queue-running"),
        stat("Failed deliveries, last 24 h", num(o.failedDeliveries24h), "failed-24h",
          "#deliveries?outcome=failed"),
        stat("Gateway processes", num(o.processes.length), "process-count"),
        stat("Default model", o.model || "none configured", "model", null, "stat text")),
      h("h2", {}, "Channels"),
      table([
        { label: "Channel", value: c => `${c.channel}${c.accountId && c.accountId !== "default" ? ` (${c.accountId})` : ""}` },
        { label: "State", value: c => badge(c.state, c.state === "connected" ? "ok" : c.state === "failed" ? "bad" : "warn") },
        { label: "Holder", value: c => c.holder || "—" },
        { label: "Refused", value: c => num(c.refused), num: true },
        { label: "Duplicates dropped", value: c => num(c.duplicatesDropped), num: true },
        { label: "Failed deliveries", value: c => num(c.deliveriesFailed), num: true },
        { label: "Last receive", value: c => c.lastReceiveAt ? when(c.lastReceiveAt) : "—" },
        { label: "Detail", value: c => c.detail || "" },
      ], o.channels, { empty: "No channel is configured (the web chat is always there).",
                        rowAttrs: c => ({ dataset: { channel: c.channel } }) }),
      h("h2", {}, "Failed deliveries, last 24 hours"),
      table([
        { label: "When", value: d => when(d.createdAt) },
        { label: "To", value: d => `${d.channel || "?"} → ${d.to || "?"}` },
        { label: "Kind", value: d => d.kind },
        { label: "Reason", value: d => d.reason || "" },
        { label: "Session", value: d => d.sessionKey
          ? h("a", { href: `#session/${enc(d.sessionKey)}` }, d.sessionKey) : "—" },
      ], failed.deliveries, { empty: "None in the last 24 hours." }),
      h("h2", {}, "Gateway processes"),
      table([
        { label: "Process", value: p => h("span", { class: "mono" }, `${p.host}:${p.pid}`) },
        { label: "This one", value: p => (p.self ? badge("serving this page", "ok") : "") },
        { label: "Started", value: p => fmtTime(p.startedAt) },
        { label: "Heartbeat", value: p => when(p.heartbeatAt) },
        { label: "Holds", value: p => p.leases.map(l => l.name).join(", ") || "—" },
      ], o.processes, { empty: "No live process (the cluster register is empty)." }),
    );
  }

  await refresh();
  return { topics: ["sessions", "deliveries", "pairing", "cron"], refresh };
}
