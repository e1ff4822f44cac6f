// Small DOM helpers: every text goes in as text (never as HTML), so nothing a chat said can
// run in the console.

export function h(tag, attrs, ...children) {
  const el = tag.includes(":")
    ? document.createElementNS("http://www.w3.org/2000/svg", tag.split(":")[1])
    : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith("on") && typeof v === "function") el.addEventListener(k.slice(2), v);
    else if (k === "dataset") Object.assign(el.dataset, v);
    else if (k === "class" && !(el instanceof SVGElement)) el.className = v;
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  add(el, children);
  return el;
}

function add(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : String(child));
  }
}

export function badge(text, cls) {
  return h("span", { class: `badge ${cls || text || ""}` }, text);
}

const pad = (n) => String(n).padStart(2, "0");

export function fmtTime(ms) {
  if (!ms) return "—";
  const d = new Date(ms);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ` +
    `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

export function ago(ms) {
  if (!ms) return "—";
  const s = Math.round((Date.now() - ms) / 1000);
  const future = s < 0;
  const a = Math.abs(s);
  const text = a < 60 ? `${a} s` : a < 3600 ? `${Math.round(a / 60)} min`
    : a < 86400 ? `${Math.round(a / 3600)} h` : `${Math.round(a / 86400)} d`;
  return future ? `in ${text}` : `${text} ago`;
}

export function when(ms) {
  return h("time", { datetime: ms ? new Date(ms).toISOString() : null, title: fmtTime(ms) },
    ago(ms));
}

export function money(usd) {
  if (usd === null || usd === undefined) return "—";
  if (usd === 0) return "$0";
  return usd < 0.01 ? `$${usd.toFixed(4)}` : `$${usd.toFixed(2)}`;
}

export const num = (n) => (n === null || n === undefined ? "—" : Number(n).toLocaleString("en"));

/** A table whose rows become labelled cards on a phone (console.css). */
export function table(columns, rows, { empty = "Nothing here.", onRow, rowAttrs } = {}) {
  if (!rows.length) return h("p", { class: "empty" }, empty);
  const head = h("tr", {}, columns.map(c => h("th", { class: c.num ? "num" : null }, c.label)));
  const body = rows.map(row => {
    const tr = h("tr", { class: onRow ? "clickable" : null, ...(rowAttrs ? rowAttrs(row) : {}) },
      columns.map(c => {
        const value = c.value(row);
        return h("td", { "data-label": c.label,
          class: c.actions ? "actions" : c.num ? "num" : null }, value);
      }));
    if (onRow) tr.addEventListener("click", (e) => {
      if (!e.target.closest("button, a, summary")) onRow(row);
    });
    return tr;
  });
  return h("div", { class: "table-wrap" },
    h("table", { class: "data" }, h("thead", {}, head), h("tbody", {}, body)));
}

let toastTimer = null;
export function toast(text, bad = false) {
  const el = document.getElementById("toast");
  el.textContent = text;
  el.className = bad ? "bad" : "";
  el.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { el.hidden = true; }, bad ? 6000 : 3000);
}

/** Run an action from a button: disabled while it runs, its error shown, never thrown. */
export async function act(button, work, done) {
  button.disabled = true;
  try {
    const result = await work();
    if (done) toast(typeof done === "function" ? done(result) : done);
    return result;
  } catch (err) {
    if (err.status !== 401) toast(err.message || String(err), true);
    return undefined;
  } finally {
    button.disabled = false;
  }
}

export function select(name, label, options, value, onChange) {
  return h("select", { name, "aria-label": label, onchange: (e) => onChange(e.target.value) },
    options.map(([v, text]) => h("option", { value: v, selected: v === value }, text)));
}
