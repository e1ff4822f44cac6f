// One session: its send policy with what decides it and a toggle (/send on|off|inherit as
// PATCH /api/sessions/{key} sendPolicy allow|deny|null), cost, reset, and the transcript
// (sessions_history over /tools/invoke) with tool calls folded.
import { enc, get, invoke, patch, post } from "../api.js";
import { act, fmtTime, h, money, num, toast } from "../dom.js";
import { policyBadge } from "./sessions.js";

const CHOICES = [["on", "allow"], ["off", "deny"], ["inherit", null]];

function partText(part) {
  if (part.type === "text") return part.text || "";
  if (part.type === "attachment") return `[${part.kind || "file"}: ${part.name || "attachment"}]`;
  return "";
}

function toolCall(part) {
  return h("details", { class: "tool", dataset: { tool: part.name || "" } },
    h("summary", {}, `Tool call: ${part.name}`),
    h("pre", {}, JSON.stringify(part.arguments ?? {}, null, 2)));
}

function message(m) {
  if (m.role === "toolResult") {
    return h("details", { class: `tool${m.isError ? " error" : ""}`, dataset: { tool: m.toolName || "" } },
      h("summary", {}, `Tool result: ${m.toolName}${m.isError ? " (error)" : ""}`),
      h("pre", {}, m.content.map(partText).join("\n")));
  }
  const text = m.content.map(partText).filter(Boolean).join("\n");
  const calls = m.content.filter(p => p.type === "toolCall").map(toolCall);
  const out = [];
  if (text) {
    out.push(h("div", { class: `msg ${m.role}`, dataset: { role: m.role } },
      h("span", { class: "meta" }, `${m.role} · ${fmtTime(m.timestamp)}`), text));
  }
  return [...out, ...calls];
}

export async function render(view, params) {
  const key = params.get("key");
  const head = h("div");
  const transcript = h("div", { class: "transcript", id: "transcript" });
  view.append(head, h("h2", {}, "Transcript"), transcript);

  async function refresh() {
    const { entry } = await get(`api/sessions/${enc(key)}`);
    const history = await invoke("sessions_history", { sessionKey: entry.sessionKey,
      includeTools: true, limit: 200 });
    const policy = entry.effectiveSendPolicy;
    const override = entry.sendPolicy || null;
    const toggle = h("div", { class: "segmented", role: "group", "aria-label": "Send policy",
      id: "send-policy" }, CHOICES.map(([label, value]) => h("button", {
      type: "button", "aria-pressed": String(override === value), dataset: { choice: label },
      onclick: (e) => act(e.currentTarget, async () => {
        await patch(`api/sessions/${enc(entry.sessionKey)}`, { sendPolicy: value });
        await refresh();
      }, `Send policy ${label}`),
    }, label)));
    let armed = false;
    const reset = h("button", { type: "button", class: "danger", id: "reset",
      onclick: (e) => {
        if (!armed) {
          armed = true;
          e.currentTarget.textContent = "Really reset? Click again";
          return;
        }
        act(e.currentTarget, async () => {
          await post(`api/sessions/${enc(entry.sessionKey)}/reset`);
          await refresh();
        }, "Session reset: a new transcript starts");
      } }, "Reset session");
    head.replaceChildren(
      h("p", { class: "small" }, h("a", { href: "#sessions" }, "← Sessions")),
      h("h1", {}, entry.displayName || entry.key),
      h("p", { class: "mono subtitle muted" }, entry.sessionKey),
      h("div", { class: "grid" },
        h("div", { class: "card" },
          h("div", { class: "muted small" }, "Session"),
          h("div", {}, `${entry.kind} · ${entry.channel} · agent ${entry.agentId}`),
          h("div", { class: "small" }, entry.lastTo ? `Replies go to ${entry.lastChannel || entry.channel} → ${entry.lastTo}` : "No route yet"),
          h("div", { class: "small muted" }, `Updated ${fmtTime(entry.updatedAt)}`)),
        h("div", { class: "card" },
          h("div", { class: "muted small" }, "Cost"),
          h("div", { class: "stat", id: "cost" }, money(entry.costUsd)),
          h("div", { class: "small" }, `${num(entry.totalTokens)} tokens · model: ${entry.model || "the agent's default"}`)),
        h("div", { class: "card" },
          h("div", { class: "muted small" }, "Send policy"),
          h("div", { class: "policy" }, policyBadge(policy),
            h("span", { id: "policy-text" }, policy.text)),
          h("div", { class: "small muted" }, `Decided by: ${policy.source === "session"
            ? "this session's override" : policy.source === "rule" ? "a configured rule"
            : policy.source === "default" ? "the configured default" : "no policy (allow)"}`),
          h("div", { class: "row" }, toggle))),
      h("div", { class: "row" },
        h("a", { href: `#deliveries?session=${enc(entry.sessionKey)}` }, "Deliveries of this session"),
        h("span", { class: "spacer" }), reset));
    const shown = history.messages.flatMap(message);
    transcript.replaceChildren(...(shown.length ? shown
      : [h("p", { class: "empty" }, "No messages yet.")]));
    if (history.truncated) transcript.prepend(h("p", { class: "muted small" }, "Older messages are not shown."));
  }

  try {
    await refresh();
  } catch (err) {
    if (err.status === 404) {
      toast(`Unknown session: ${key}`, true);
      head.replaceChildren(h("p", { class: "problem" }, `Unknown session: ${key}`));
      return { topics: [], refresh: async () => {} };
    }
    throw err;
  }
  return { topics: ["sessions"], refresh };
}
