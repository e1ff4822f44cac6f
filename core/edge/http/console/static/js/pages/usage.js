// Usage: cost and turns by day (a chart), agent, channel, session and model (GET /api/usage).
import { enc, get } from "../api.js";
import { barChart } from "../chart.js";
import { h, money, num, select, table } from "../dom.js";

function groupTable(rows, first, link) {
  return table([
    { label: first, value: r => (link ? h("a", { href: link(r), class: "mono" }, r.key) : r.key) },
    { label: "Turns", value: r => num(r.turns), num: true },
    { label: "Cost", value: r => money(r.costUsd), num: true },
    { label: "Priced turns", value: r => num(r.pricedTurns), num: true },
    { label: "Tokens in / out", value: r => `${num(r.inputTokens)} / ${num(r.outputTokens)}`, num: true },
  ], rows, { empty: "No turn in this range.", rowAttrs: r => ({ dataset: { key: r.key } }) });
}

export async function render(view, params) {
  const body = h("div", { id: "usage" });
  const days = params.get("days") || "30";
  const metric = params.get("metric") || "auto";
  const update = (name, value) => {
    params.set(name, value);
    location.hash = `#usage?${params}`;  // the page renders again for the new range
  };
  view.append(h("h1", {}, "Usage"),
    h("div", { class: "filters" },
      select("days", "Range", [["7", "Last 7 days"], ["30", "Last 30 days"], ["90", "Last 90 days"],
        ["366", "Last year"]], days, v => update("days", v)),
      select("metric", "Chart", [["auto", "Chart: cost if priced"], ["cost", "Chart: cost"],
        ["turns", "Chart: turns"]], metric,
        v => update("metric", v))),
    body);

  async function refresh() {
    const u = await get(`api/usage?days=${enc(days)}`);
    const t = u.totals;
    const chart = metric === "auto" ? (t.pricedTurns ? "cost" : "turns") : metric;
    body.replaceChildren(
      h("div", { class: "grid" },
        h("div", { class: "card" }, h("div", { class: "muted small" }, "Cost"),
          h("div", { class: "stat", id: "total-cost" }, money(t.costUsd)),
          h("div", { class: "small muted" }, `${num(t.pricedTurns)} of ${num(t.turns)} turns priced`)),
        h("div", { class: "card" }, h("div", { class: "muted small" }, "Turns"),
          h("div", { class: "stat", id: "total-turns" }, num(t.turns))),
        h("div", { class: "card" }, h("div", { class: "muted small" }, "Tokens in / out"),
          h("div", { class: "stat" }, `${num(t.inputTokens)} / ${num(t.outputTokens)}`))),
      h("h2", {}, chart === "cost" ? "Cost by day (UTC)" : "Turns by day (UTC)"),
      h("div", { class: "card", id: "chart", dataset: { metric: chart } }, barChart(u.byDay, {
        value: r => (chart === "cost" ? r.costUsd : r.turns), label: r => r.key,
        format: chart === "cost" ? money : num,
        title: chart === "cost" ? "Cost by day" : "Turns by day" })),
      h("h2", {}, "By agent"), groupTable(u.byAgent, "Agent"),
      h("h2", {}, "By channel"), groupTable(u.byChannel, "Channel"),
      h("h2", {}, "By model"), groupTable(u.byModel, "Model"),
      h("h2", {}, `By session (top ${u.bySession.length} of ${u.sessionsTotal})`),
      groupTable(u.bySession, "Session", r => `#session/${enc(r.key)}`));
  }

  await refresh();
  return { topics: [], refresh };  // a report: read when opened (D183), not on every turn
}
