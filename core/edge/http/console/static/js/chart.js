// A bar chart in plain SVG (no library): one bar per item, its value as a tooltip.
import { h } from "./dom.js";

export function barChart(items, { value, label, format, title }) {
  const width = 1000, height = 220, left = 52, bottom = 24, top = 10;
  const max = Math.max(...items.map(value), 0);
  const scale = max > 0 ? (height - bottom - top) / max : 0;
  const step = items.length ? (width - left) / items.length : 0;
  const bars = items.map((item, i) => {
    const v = value(item);
    const bh = Math.max(v * scale, v > 0 ? 1 : 0);
    return h("svg:rect", { class: "bar", x: (left + i * step + step * 0.12).toFixed(1),
      y: (height - bottom - bh).toFixed(1), width: Math.max(step * 0.76, 1).toFixed(1),
      height: bh.toFixed(1), "data-key": label(item), "data-value": String(v) },
      h("svg:title", {}, `${label(item)}: ${format(v)}`));
  });
  const every = Math.max(1, Math.ceil(items.length / 8));
  const ticks = items.map((item, i) => (i % every === 0
    ? h("svg:text", { x: (left + i * step + step / 2).toFixed(1), y: height - 6,
      "text-anchor": "middle" }, label(item).slice(5)) : null));
  return h("svg:svg", { class: "chart", viewBox: `0 0 ${width} ${height}`, role: "img",
    "aria-label": title },
    h("svg:title", {}, title),
    h("svg:line", { class: "axis", x1: left, x2: width, y1: height - bottom, y2: height - bottom }),
    h("svg:text", { x: 2, y: top + 10 }, format(max)),
    h("svg:text", { x: 2, y: height - bottom }, format(0)),
    bars, ticks);
}
