// Access: pending pairing requests (approve/deny), approved senders (revoke), and, where the
// gateway serves them, linked identities and pending tool approvals.
import { del, enc, get, hasRoute, post } from "../api.js";
import { act, badge, h, table, when } from "../dom.js";

/** A list from an API whose shape this page does not know in detail: its fields as columns. */
function generic(rows, empty) {
  const keys = [...new Set(rows.flatMap(r => Object.keys(r)))].slice(0, 8);
  return table(keys.map(k => ({ label: k, value: r => {
    const v = r[k];
    return v === null || v === undefined ? "—" : typeof v === "object" ? JSON.stringify(v) : String(v);
  } })), rows, { empty });
}

function firstList(body) {
  if (Array.isArray(body)) return body;
  const list = Object.values(body || {}).find(v => Array.isArray(v));
  return list || [];
}

export async function render(view) {
  const pairing = h("div", { id: "pairing" });
  const approved = h("div", { id: "approved" });
  const extra = h("div");
  view.append(h("h1", {}, "Access"),
    h("h2", {}, "Pending pairing requests"), pairing,
    h("h2", {}, "Approved senders"), approved, extra);
  const optional = [];
  if (await hasRoute("/api/identities")) {
    const box = h("div", { id: "identities" });
    extra.append(h("h2", {}, "Linked identities"), box);
    optional.push(async () => box.replaceChildren(
      generic(firstList(await get("api/identities")), "No linked identity.")));
  }
  if (await hasRoute("/api/approvals")) {
    const box = h("div", { id: "approvals" });
    extra.append(h("h2", {}, "Pending tool approvals"), box);
    optional.push(async () => box.replaceChildren(
      generic(firstList(await get("api/approvals")), "No tool waits for an approval.")));
  }

  async function refresh() {
    const state = await get("api/pairing");
    pairing.replaceChildren(table([
      { label: "Channel", value: r => r.accountId && r.accountId !== "default" ? `${r.channel} (${r.accountId})` : r.channel },
      { label: "Who", value: r => `${r.userName || "unknown"} (${r.userId})` },
      { label: "Chat", value: r => r.chatId !== r.userId ? `group ${r.chatId}` : "DM" },
      { label: "Code", value: r => h("span", { class: "mono" }, r.code) },
      { label: "First message", value: r => r.preview },
      { label: "Asked", value: r => when(r.createdAt) },
      { label: "Expires", value: r => when(r.expiresAt) },
      { label: "", actions: true, value: r => [
        h("button", { type: "button", class: "approve", dataset: { code: r.code },
          onclick: (e) => act(e.currentTarget, async () => {
            await post(`api/pairing/${enc(r.channel)}/${enc(r.code)}/approve`);
            await refresh();
          }, `Approved ${r.userName || r.userId}: they are told so in their chat`) }, "Approve"),
        h("button", { type: "button", class: "secondary deny", dataset: { code: r.code },
          onclick: (e) => act(e.currentTarget, async () => {
            await post(`api/pairing/${enc(r.channel)}/${enc(r.code)}/deny`);
            await refresh();
          }, "Denied") }, "Deny")] },
    ], state.requests, { empty: "Nobody is waiting.",
                          rowAttrs: r => ({ dataset: { code: r.code, user: r.userId } }) }));
    approved.replaceChildren(table([
      { label: "Channel", value: a => a.accountId && a.accountId !== "default" ? `${a.channel} (${a.accountId})` : a.channel },
      { label: "Sender", value: a => h("span", { class: "mono" }, a.userId) },
      { label: "Approved", value: a => when(a.approvedAt) },
      { label: "Role", value: () => badge("member", "ok") },
      { label: "", actions: true, value: a => {
        let armed = false;
        return h("button", { type: "button", class: "danger revoke", dataset: { user: a.userId },
          onclick: (e) => {
            if (!armed) { armed = true; e.currentTarget.textContent = "Really revoke?"; return; }
            act(e.currentTarget, async () => {
              await del(`api/pairing/${enc(a.channel)}/approved/${enc(a.userId)}`);
              await refresh();
            }, `Revoked ${a.userId}`);
          } }, "Revoke");
      } },
    ], state.approved, { empty: "Nobody approved yet.",
                          rowAttrs: a => ({ dataset: { user: a.userId } }) }));
    await Promise.all(optional.map(f => f()));
  }

  await refresh();
  return { topics: ["pairing"], refresh };
}
