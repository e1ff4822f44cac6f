// Config: the effective configuration with secrets masked (GET /api/config, as
// `crosstalk config check`), one folded section per top-level key.
import { get } from "../api.js";
import { h } from "../dom.js";

export async function render(view) {
  const { config } = await get("api/config");
  view.append(h("h1", {}, "Config"),
    h("p", { class: "muted small" }, "The effective configuration, as `crosstalk config check` prints it: defaults filled in, every secret shown as ***. Change it in the config file and restart the gateway."),
    h("div", { id: "config" }, Object.entries(config).map(([section, value]) =>
      h("details", { class: "card", open: ["gateway", "channels", "agents"].includes(section) || null,
        dataset: { section } },
        h("summary", {}, h("strong", {}, section)),
        h("pre", {}, JSON.stringify(value, null, 2))))));
  return { topics: [], refresh: async () => {} };
}
