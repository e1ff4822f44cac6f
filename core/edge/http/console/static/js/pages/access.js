// Access: pending pairing requests (approve/deny), approved senders (revoke), and, where the
// gateway serves them, linked identities and pending tool approvals.
import { del, enc, get, hasRoute, post } from "../api.js";
import { act, badge, h, table, when } from "../dom.js";

function firstList(body) {
  if (Array.isArray(body)) return body;
  const list = Object.values(body || {}).find(v => Array.isArray(v));
  return list || [];
}

/** Linked identities (D65: GET /api/identities, DELETE /api/identities/{channel}/{userId}). */
async function identities(box, refresh) {
  const body = await get("api/identities");
  const rows = (body.persons || []).flatMap(p => (p.identities || []).map(i => ({ ...i,
    personId: p.personId })));
  box.replaceChildren(table([
    { label: "Person", value: r => h("span", { class: "mono" }, r.personId) },
    { label: "Account", value: r => `${r.channel}:${r.userId}` },
    { label: "Linked", value: r => (r.linkedAt ? when(r.linkedAt) : "in the config") },
    { label: "", actions: true, value: r => h("button", { type: "button",
      class: "secondary unlink", dataset: { user: r.userId },
      onclick: (e) => act(e.currentTarget, async () => {
        await del(`api/identities/${enc(r.channel)}/${enc(r.userId)}`);
        await refresh();
      }, `Unlinked ${r.channel}:${r.userId}`) }, "Unlink") },
  ], rows, { empty: "No linked identity.",
             rowAttrs: r => ({ dataset: { person: r.personId, user: r.userId } }) }));
}

/** Pending tool approvals (D72: GET /api/approvals, POST /api/approvals/{id}/approve|deny). */
async function approvals(box, refresh) {
  const body = await get("api/approvals");
  const rows = Array.isArray(body) ? body : body.approvals || firstList(body);
  const decide = (r, verb, label) => h("button", { type: "button",
    class: verb === "approve" ? `${verb}-tool` : `secondary ${verb}-tool`, dataset: { id: r.id },
    onclick: (e) => act(e.currentTarget, async () => {
      await post(`api/approvals/${enc(r.id)}/${verb}`);
      await refresh();
    }, `${label}: ${r.tool}`) }, label);
  box.replaceChildren(table([
    { label: "Tool", value: r => h("span", { class: "mono" }, r.tool) },
    { label: "Arguments", value: r => h("details", {}, h("summary", {}, "arguments"),
      h("pre", {}, JSON.stringify(r.arguments ?? {}, null, 2))) },
    { label: "Session", value: r => (r.sessionKey
      ? h("a", { href: `#session/${enc(r.sessionKey)}`, class: "mono" }, r.sessionKey) : "—") },
    { label: "Asked by", value: r => (typeof r.requester === "object" && r.requester
      ? JSON.stringify(r.requester) : String(r.requester ?? "—")) },
    { label: "Asked", value: r => when(r.createdAt) },
    { label: "Expires", value: r => when(r.expiresAt) },
    { label: "", actions: true, value: r => [decide(r, "approve", "Approve"),
      decide(r, "deny", "Deny")] },
  ], rows, { empty: "No tool waits for an approval.",
             rowAttrs: r => ({ dataset: { id: r.id } }) }));
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
    optional.push(() => identities(box, refresh));
  }
  if (await hasRoute("/api/approvals")) {
    const box = h("div", { id: "approvals" });
    extra.append(h("h2", {}, "Pending tool approvals"), box);
    optional.push(() => approvals(box, refresh));
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
  // an approval request is a delivery (it goes through the gate to an owner's chat, D72)
  return { topics: ["pairing", "deliveries"], refresh };
}
