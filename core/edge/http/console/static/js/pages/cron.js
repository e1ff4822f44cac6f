// Cron and hooks: jobs with next and last run and status (GET /api/cron); enable, disable, run
// now, remove; the webhook mappings with their tokens masked (GET /api/hooks).
import { del, enc, get, post } from "../api.js";
import { act, badge, h, table, when } from "../dom.js";

function schedule(j) {
  if (j.schedule) return `${j.schedule}${j.tz ? ` (${j.tz})` : ""}`;
  if (j.every) return `every ${j.every}`;
  if (j.at) return `once at ${j.at}`;
  return "—";
}

function target(deliver) {
  if (!deliver || deliver === "none") return "none";
  return `${deliver.channel} → ${deliver.to}`;
}

export async function render(view) {
  const jobs = h("div", { id: "cron-jobs" });
  const hooks = h("div", { id: "hooks" });
  view.append(h("h1", {}, "Cron and hooks"), h("h2", {}, "Cron jobs"), jobs,
    h("h2", {}, "Webhooks"), hooks);

  async function refresh() {
    const [cron, hookList] = await Promise.all([get("api/cron"), get("api/hooks")]);
    const action = (label, cls, job, work, done) => h("button", { type: "button",
      class: cls, dataset: { action: label.toLowerCase().replace(/ /g, "-"), job: job.id },
      onclick: (e) => act(e.currentTarget, async () => { await work(); await refresh(); }, done) },
      label);
    jobs.replaceChildren(table([
      { label: "Job", value: j => h("span", { class: "mono" }, j.id) },
      { label: "Schedule", value: schedule },
      { label: "Agent", value: j => j.agentId },
      { label: "Delivers to", value: j => target(j.deliver) },
      { label: "State", value: j => j.running ? badge("running", "running-state")
        : j.enabled ? badge("enabled", "ok") : badge("disabled", "warn") },
      { label: "Next run", value: j => (j.nextRunAt ? when(j.nextRunAt) : "—") },
      { label: "Last run", value: j => (j.lastRunAt ? when(j.lastRunAt) : "never") },
      { label: "Last status", value: j => j.lastStatus
        ? [badge(j.lastStatus, j.lastStatus === "ok" ? "ok" : "bad"), j.lastError ? ` ${j.lastError}` : ""]
        : "—" },
      { label: "", actions: true, value: j => [
        action("Run now", "run", j, () => post(`api/cron/${enc(j.id)}/run`), `Started ${j.id}`),
        j.enabled
          ? action("Disable", "secondary", j, () => post(`api/cron/${enc(j.id)}/disable`), `Disabled ${j.id}`)
          : action("Enable", "secondary", j, () => post(`api/cron/${enc(j.id)}/enable`), `Enabled ${j.id}`),
        j.source === "config" ? null
          : action("Remove", "danger", j, () => del(`api/cron/${enc(j.id)}`), `Removed ${j.id}`)] },
    ], cron.jobs, { empty: "No cron job. Add one in the config (cron.jobs), with `crosstalk cron`, or let an agent use its cron tool.",
                    rowAttrs: j => ({ dataset: { job: j.id } }) }));
    hooks.replaceChildren(table([
      { label: "Hook", value: m => h("span", { class: "mono" }, m.id) },
      { label: "URL", value: m => h("span", { class: "mono" }, `POST ${m.url}`) },
      { label: "Token", value: m => h("span", { class: "mono token" }, m.token || "—") },
      { label: "Agent", value: m => m.agentId || "default" },
      { label: "Session", value: m => m.sessionKey || "hook:<new each time>" },
      { label: "Delivers to", value: m => target(m.deliver) },
    ], hookList.hooks, { empty: "No webhook mapping (hooks.mappings in the config).",
                         rowAttrs: m => ({ dataset: { hook: m.id } }) }));
  }

  await refresh();
  return { topics: ["cron"], refresh };
}
