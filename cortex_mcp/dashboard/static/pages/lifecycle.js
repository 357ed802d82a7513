// Lifecycle: the preview of the next run (what `cortex-mcp lifecycle preview` lists), a run
// button for the operator, reflect's proposed edits to core (accepted or rejected here, as
// `cortex-mcp reflect accept|reject ID` does), and past runs with what each phase did.

import { api, currentAgent } from "../api.js";
import { announce, navigate, showError } from "../app.js";
import { h, num, short, table, when } from "../dom.js";

const KINDS = ["promote", "expire", "merge", "archive", "compress"];

export async function render(root) {
  root.append(h("h1", {}, "Lifecycle"));
  const [preview, history, proposed] = await Promise.all([
    api("GET", "/lifecycle/preview"),
    api("GET", "/lifecycle/runs", { query: { limit: 20 } }),
    api("GET", "/reflect/proposals"),
  ]);
  root.append(h("section", { "aria-labelledby": "preview-h" },
    h("h2", { id: "preview-h" }, "Next run (preview)"),
    h("p", {}, `If it ran now for ${currentAgent()}: `, counts(preview.counts) || "nothing to do."),
    actionsTable("Planned steps", preview.actions, "preview-actions"),
    reflectTable(preview.reflect || []),
    runButton(preview)));
  root.append(proposalsSection(proposed.proposals));
  root.append(h("section", { "aria-labelledby": "runs-h" },
    h("h2", { id: "runs-h" }, "Past runs"),
    history.runs.length ? runsTable(history.runs) : h("p", {}, "No run yet."),
    history.runs.map((run) => runDetails(run))));
}

function counts(map) {
  return Object.entries(map || {})
    .filter(([k, v]) => v && k !== "memories_touched")
    .map(([k, v]) => `${k} ${v}`).join(", ");
}

function ids(list) {
  return list.slice(0, 4).map((id, i) => [i ? ", " : "", h("a", { href: `#/memory/${id}`, title: id }, `…${id.slice(-8)}`)]).concat(
    list.length > 4 ? [` +${list.length - 4}`] : []);
}

function actionsTable(caption, actions, id) {
  const rows = actions.map((a) => h("tr", { dataset: { kind: a.kind, ids: a.ids.join(",") } },
    h("td", {}, a.phase), h("td", {}, a.kind), h("td", {}, ids(a.ids)),
    h("td", { class: "num" }, a.score === null || a.score === undefined ? "—" : num(a.score, 3)),
    h("td", {}, short(a.reason, 140))));
  return table(`${caption} (${actions.length})`, ["Phase", "Step", "Memories", "Score", "Why"],
    rows.length ? rows : [h("tr", {}, h("td", { colspan: 5 }, "None."))], { id });
}

// the run's last step: reflect on the memories new since the last one (entity pages refreshed,
// edits to core proposed, never applied without a decision below)
function reflectTable(reports) {
  const rows = reports.flatMap((r) => [
    ...r.entities.map((e) => h("tr", { dataset: { reflect: "page", id: e.id } },
      h("td", {}, "page"), h("td", {}, e.name), h("td", {}, short(e.summary, 160)))),
    ...r.proposals.map((p) => h("tr", { dataset: { reflect: p.action, id: p.memory_id } },
      h("td", {}, `propose ${p.action}`), h("td", {}, ids([p.memory_id])), h("td", {}, short(p.reason, 160)))),
  ]);
  const read = reports.reduce((sum, r) => sum + r.memories, 0);
  return table(`Reflect step: ${read} new memories read (${rows.length} changes)`, ["Change", "Of", "What"],
    rows.length ? rows : [h("tr", {}, h("td", { colspan: 3 }, "None."))], { id: "preview-reflect" });
}

function runButton(preview) {
  const dialog = h("dialog", { id: "run-dialog", "aria-labelledby": "run-title" },
    h("h2", { id: "run-title" }, "Run the lifecycle now?"),
    h("p", {}, `This applies the ${preview.actions.length} planned step(s) for ${currentAgent()}: promotes, merges, archives and compresses as listed, then reflects as listed (proposals wait for a decision). Every change is written to the audit log with the ids it touched.`),
    h("form", { method: "dialog", class: "controls" },
      h("button", { value: "cancel", autofocus: true }, "Cancel"),
      h("button", { value: "run", class: "primary", id: "run-confirm" }, "Run")));
  dialog.addEventListener("close", async () => {
    if (dialog.returnValue !== "run") return;
    try {
      const report = await api("POST", "/lifecycle/run", { body: {} });
      announce(report.status === "busy" ? `Another run holds the lease (${report.holder}).` : `Run ${report.run_id} done: ${counts(report.counts) || "nothing to do"}.`);
      navigate("#/lifecycle");
    } catch (error) { showError(error); }
  });
  return h("div", { class: "controls" },
    h("button", { type: "button", class: "primary", id: "run-lifecycle", onclick: () => dialog.showModal() }, "Run now…"), dialog);
}

function runsTable(runs) {
  return table("Runs, newest first", ["Run", "For", "Run as of", "Finished", "Status", ...KINDS],
    runs.map((run) => h("tr", {},
      h("td", {}, h("a", { href: `#run-${run.id}` }, `#${run.id}`)), h("td", {}, run.scope === "*" ? "every agent" : run.scope),
      h("td", {}, when(run.run_at)), h("td", {}, when(run.finished_at)), h("td", {}, run.status),
      KINDS.map((k) => h("td", { class: "num" }, run.agent_counts[k] || 0)))));
}

function runDetails(run) {
  const actions = run.actions;
  if (!actions.length) return null;
  return h("details", { id: `run-${run.id}` },
    h("summary", {}, `Run #${run.id}: ${actions.length} planned step(s) for this agent`),
    actionsTable(`Steps of run #${run.id}`, actions, null));
}

function proposalsSection(proposals) {
  const rows = proposals.map((p) => h("tr", { dataset: { proposal: p.id, action: p.action } },
    h("td", {}, p.action), h("td", {}, ids([p.memory_id])), h("td", {}, short(p.reason, 160)),
    h("td", {}, when(p.created_at)),
    h("td", { class: "controls" },
      h("button", { type: "button", class: "primary", "aria-label": `Accept: ${p.action} ${p.memory_id}`, onclick: () => decide(p, true) }, "Accept"),
      h("button", { type: "button", "aria-label": `Reject: ${p.action} ${p.memory_id}`, onclick: () => decide(p, false) }, "Reject"))));
  return h("section", { "aria-labelledby": "proposals-h" },
    h("h2", { id: "proposals-h" }, "Proposed edits to core (reflect)"),
    h("p", {}, "Reflect proposes these and never applies them: accept one to apply it (promote moves the memory to core, archive moves it to the archive), or reject it. Each decision is written to the audit log."),
    table(`Pending proposals (${proposals.length})`, ["Edit", "Memory", "Why", "Proposed", "Decision"],
      rows.length ? rows : [h("tr", {}, h("td", { colspan: 5 }, "None."))], { id: "proposals" }));
}

async function decide(proposal, accept) {
  try {
    const done = await api("POST", `/reflect/proposals/${encodeURIComponent(proposal.id)}`, { body: { accept } });
    announce(`Proposal to ${proposal.action} …${proposal.memory_id.slice(-8)} ${done.status}.`);
    navigate("#/lifecycle");
  } catch (error) { showError(error); }
}
