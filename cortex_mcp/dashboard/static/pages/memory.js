// One memory: content and metadata, where it came from, its correction chain, the summary
// covering it, access and audit history; edit, correct, forget, restore, purge.

import { api } from "../api.js";
import { announce, navigate, showError } from "../app.js";
import { CATEGORIES, LAYERS, h, num, occurred, select, short, table, when, zoneName } from "../dom.js";

export async function render(root, { arg }) {
  const page = await api("GET", `/memories/${encodeURIComponent(arg)}/detail`);
  const m = page.memory;
  root.append(
    h("p", {}, h("a", { href: "#/memories" }, "← Memories")),
    h("h1", {}, "Memory"),
    h("blockquote", { class: "memory", id: "memory-content" }, m.content),
  );
  root.append(h("div", { class: "grid2" },
    h("section", { "aria-labelledby": "meta-h" }, h("h2", { id: "meta-h" }, "Details"), metadata(m)),
    h("section", { "aria-labelledby": "edit-h" }, h("h2", { id: "edit-h" }, "Edit"), editForm(m)),
  ));
  root.append(actions(m));
  root.append(provenance(page.provenance));
  root.append(chain(m, page.correction_chain, page.covered_by));
  root.append(table("Access history (most recent first; queries are kept as hashes)",
    ["When", "Rank", "Query hash"],
    (page.access_history.length ? page.access_history : [null]).map((a) => a
      ? h("tr", {}, h("td", {}, when(a.accessed_at)), h("td", { class: "num" }, a.rank), h("td", {}, short(a.query_hash || "", 16)))
      : h("tr", {}, h("td", { colspan: 3 }, "Never recalled.")))));
  root.append(table("Audit log", ["When", "Action", "By", "Details"],
    (page.history.length ? page.history : [null]).map((e) => e
      ? h("tr", {}, h("td", {}, when(e.executed_at)), h("td", {}, e.action), h("td", {}, actor(e.details.actor)),
        h("td", { class: "content" }, JSON.stringify({ ...e.details, actor: undefined })))
      : h("tr", {}, h("td", { colspan: 4 }, "No entries.")))));
  if (page.relations.length) {
    root.append(table("Relations extracted with it", ["Subject", "Predicate", "Object"],
      page.relations.map((r) => h("tr", {}, h("td", {}, r.subject), h("td", {}, r.predicate), h("td", {}, r.object)))));
  }
}

// who acted, as a log entry records it (an entry written before issue 35 says nothing)
function actor(a) {
  if (!a) return "";
  if (a.subject) return `${a.subject} (${a.issuer})`;
  if (a.token_id) return `token ${a.token_id}`;
  return a.kind;
}

function metadata(m) {
  const rows = [
    ["Id", m.id], ["Agent", m.agent_id], ["Layer", m.layer], ["Category", m.category],
    ["Importance", num(m.importance)], ["Confidence", num(m.confidence)],
    ["Times recalled", m.access_count], ["Last recalled", when(m.last_accessed)],
    [`Occurred (${zoneName()})`, occurred(m.occurred_at)], ...period(m.metadata),
    [`Stored (${zoneName()})`, when(m.created_at)], [`Updated (${zoneName()})`, when(m.updated_at)],
    ["Expires", when(m.expires_at)], ["Shared with other agents", m.shared ? "yes" : "no"],
    ["Forgotten", when(m.forgotten_at)], ["Source", m.source || "—"],
  ];
  return h("dl", { class: "meta", id: "memory-meta" },
    rows.map(([k, v]) => [h("dt", {}, k), h("dd", { dataset: { key: k } }, String(v))]));
}

// A summary's period: the first and last moment of what it covers (period_range), else its
// month (period); nothing for other memories.
function period(metadata) {
  const range = metadata && metadata.period_range;
  if (range && range.start && range.end) return [[`Period covered (${zoneName()})`, `${when(range.start)} to ${when(range.end)}`]];
  if (metadata && typeof metadata.period === "string") return [["Period covered", metadata.period]];
  return [];
}

function editForm(m) {
  const importance = h("input", { id: "edit-importance", name: "importance", type: "number", min: 0, max: 1, step: 0.05, value: m.importance });
  const shared = h("input", { id: "edit-shared", name: "shared", type: "checkbox", checked: m.shared });
  const form = h("form", { class: "controls", id: "edit-form", onsubmit: async (event) => {
    event.preventDefault();
    const data = new FormData(form);
    try {
      await api("PATCH", `/memories/${m.id}`, { body: {
        category: data.get("category"), layer: data.get("layer"),
        importance: Number(data.get("importance")), shared: shared.checked,
      } });
      announce("Saved.");
      navigate(`#/memory/${m.id}`);
    } catch (error) { showError(error); }
  } },
    h("div", {}, select("edit-category", "Category", CATEGORIES, m.category, { name: "category" })),
    h("div", {}, select("edit-layer", "Layer", LAYERS, m.layer, { name: "layer" })),
    h("div", {}, h("label", { for: "edit-importance" }, "Importance (0–1)"), importance),
    h("div", {}, h("label", { for: "edit-shared" }, "Shared"), shared),
    h("div", {}, h("button", { type: "submit", class: "primary" }, "Save changes")),
  );
  return form;
}

function actions(m) {
  const section = h("section", { "aria-labelledby": "act-h" }, h("h2", { id: "act-h" }, "Correct, forget, purge"));
  const text = h("textarea", { id: "correct-text", name: "content", rows: 3, cols: 60 }, m.content);
  const reason = h("input", { id: "correct-reason", name: "reason" });
  section.append(h("form", { class: "controls", onsubmit: async (event) => {
    event.preventDefault();
    try {
      const done = await api("POST", `/memories/${m.id}/correct`, { body: { content: text.value, reason: reason.value || undefined } });
      announce("Correction saved: the old version is superseded.");
      navigate(`#/memory/${done.new_id}`);
    } catch (error) { showError(error); }
  } },
    h("div", {}, h("label", { for: "correct-text" }, "Corrected text (a new version that supersedes this one)"), text),
    h("div", {}, h("label", { for: "correct-reason" }, "Reason"), reason),
    h("div", {}, h("button", { type: "submit" }, "Save correction"))));

  const buttons = h("div", { class: "controls" });
  if (m.forgotten_at) {
    const [layerLabel, layerSel] = select("restore-layer", "Restore into layer", LAYERS, "core");
    buttons.append(h("div", {}, layerLabel, layerSel), h("div", {}, h("button", { type: "button", id: "restore", class: "primary", onclick: async () => {
      try {
        await api("POST", `/memories/${m.id}/restore`, { body: { layer: layerSel.value } });
        announce("Restored.");
        navigate(`#/memory/${m.id}`);
      } catch (error) { showError(error); }
    } }, "Restore")));
  } else {
    buttons.append(h("div", {}, h("button", { type: "button", id: "forget", onclick: async () => {
      try {
        await api("DELETE", `/memories/${m.id}`, { query: { reason: "forgotten from the dashboard" } });
        announce("Forgotten: out of recall, kept in the archive; Restore brings it back.");
        navigate(`#/memory/${m.id}`);
      } catch (error) { showError(error); }
    } }, "Forget")));
  }
  const dialog = h("dialog", { id: "purge-dialog", "aria-labelledby": "purge-title" },
    h("h2", { id: "purge-title" }, "Purge this memory?"),
    h("p", {}, "Purge erases this memory for good: its text leaves the database, the text index, the vectors, the relations extracted with it and any summary that quoted it; the database file is checkpointed so no old copy stays behind. The audit log keeps only a content-free entry with its id. This cannot be undone; Forget keeps it restorable."),
    h("form", { method: "dialog", class: "controls" },
      h("button", { value: "cancel", autofocus: true }, "Cancel"),
      h("button", { value: "purge", class: "danger", id: "purge-confirm" }, "Purge for good")));
  dialog.addEventListener("close", async () => {
    if (dialog.returnValue !== "purge") return;
    try {
      await api("DELETE", `/memories/${m.id}`, { query: { purge: "true" } });
      announce("Purged.");
      navigate("#/memories");
    } catch (error) { showError(error); }
  });
  buttons.append(h("div", {}, h("button", { type: "button", class: "danger", id: "purge", onclick: () => dialog.showModal() }, "Purge…")), dialog);
  section.append(buttons);
  return section;
}

function provenance(p) {
  const items = [h("dt", {}, "Came from"), h("dd", { id: "provenance-kind" }, p.kind),
    h("dt", {}, "Source"), h("dd", {}, p.source || "—")];
  if (p.turn) {
    items.push(h("dt", {}, "Turn"), h("dd", {}, `${p.turn.id} · session ${p.turn.session_id || "—"} · ${when(p.turn.created_at)} · ${p.turn.outcome || p.turn.status}`));
  }
  const meta = Object.keys(p.metadata || {}).length ? JSON.stringify(p.metadata) : "—";
  items.push(h("dt", {}, "Metadata"), h("dd", { class: "content" }, meta));
  return h("section", { "aria-labelledby": "prov-h" }, h("h2", { id: "prov-h" }, "Where it came from"), h("dl", { class: "meta" }, items));
}

function chain(m, versions, covering) {
  const rows = versions.map((v) => h("tr", {},
    h("td", {}, v.superseded_by === m.id ? "older (corrected by this)" : "newer (corrects this)"),
    h("td", {}, h("a", { href: `#/memory/${v.id}` }, short(v.content, 120))),
    h("td", {}, when(v.created_at))));
  const section = h("section", { "aria-labelledby": "chain-h" }, h("h2", { id: "chain-h" }, "Correction chain and summary"));
  section.append(table("Correction chain (superseded_by, both ways)", ["Version", "Content", "Created"],
    rows.length ? rows : [h("tr", {}, h("td", { colspan: 3 }, "No other versions."))]));
  section.append(h("p", {}, "Covered by summary: ", covering.length
    ? covering.map((s) => h("a", { href: `#/memory/${s.id}` }, short(s.content, 100)))
    : "none"));
  return section;
}
