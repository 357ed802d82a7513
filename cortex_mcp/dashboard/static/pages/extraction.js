// Extraction log: each ingested turn beside what the sieve (high signals) and the LLM
// (extracted) or, without one, the rules made of it, with a way to fix a category or importance, or drop a memory.

import { api } from "../api.js";
import { announce, showError } from "../app.js";
import { CATEGORIES, h, num, when } from "../dom.js";

export async function render(root) {
  root.append(h("h1", {}, "Extraction log"));
  root.append(h("p", { class: "muted" }, "Turns the server ingested, newest first. A turn's raw text is kept only until its extraction is written; afterwards what it produced is shown."));
  const list = h("div", { id: "turns" });
  root.append(list);
  let before = null;
  const more = h("button", { type: "button", onclick: () => load() }, "Older turns");
  root.append(more);
  async function load() {
    const page = await api("GET", "/turns", { query: { limit: 20, before: before || undefined } });
    for (const turn of page.turns) list.append(turnCard(turn));
    if (!list.firstChild) list.append(h("p", {}, "No ingested turns for this agent."));
    before = page.next_before;
    more.hidden = !before;
  }
  await load();
}

function turnCard(turn) {
  const card = h("article", { class: "card", "aria-label": `Turn ${when(turn.created_at)}`, dataset: { turn: turn.id } },
    h("h2", {}, `${when(turn.created_at)} · ${turn.outcome || turn.status}`),
    h("p", { class: "muted" }, `session ${turn.session_id || "—"} · attempts ${turn.attempts} · turn ${turn.id}`));
  if (turn.user_message || turn.assistant_message) {
    card.append(h("dl", { class: "meta" },
      h("dt", {}, "User"), h("dd", { class: "content" }, turn.user_message || "—"),
      h("dt", {}, "Assistant"), h("dd", { class: "content" }, turn.assistant_message || "—")));
  }
  card.append(memoryList("Sieve (high signals, to core)", turn.high_signals, turn.id, "hs"),
    memoryList(extractedTitle(turn), turn.extracted, turn.id, "ex"));
  return card;
}

// Named by what made them: an LLM's extraction, or (no LLM, or it failed) the rules, which
// keep the user's message as a working note
function extractedTitle(turn) {
  if (turn.outcome === "extracted") return "LLM (extracted, to working)";
  if (turn.outcome === "fallback") return "No LLM: the user's message kept as a note (to working)";
  if (turn.outcome === "skipped") return "Nothing to extract (skipped)";
  return "Extraction (not done yet)";
}

function memoryList(title, memories, turnId, key) {
  const section = h("section", {}, h("h3", {}, `${title}: ${memories.length}`));
  if (!memories.length) return section;
  const list = h("ul", {});
  memories.forEach((m, i) => list.append(h("li", {}, m.purged ? `memory ${m.id} (purged)` : memoryRow(m, `${turnId}-${key}-${i}`))));
  section.append(list);
  return section;
}

function memoryRow(m, key) {
  const cat = h("select", { id: `cat-${key}`, name: "category" },
    CATEGORIES.map((c) => h("option", { value: c, selected: c === m.category }, c)));
  const imp = h("input", { id: `imp-${key}`, name: "importance", type: "number", min: 0, max: 1, step: 0.05, value: m.importance });
  const form = h("form", { class: "controls", onsubmit: async (event) => {
    event.preventDefault();
    try {
      await api("PATCH", `/memories/${m.id}`, { body: { category: cat.value, importance: Number(imp.value) } });
      announce("Saved.");
    } catch (error) { showError(error); }
  } },
    h("div", {}, h("a", { href: `#/memory/${m.id}` }, m.content), h("span", { class: "muted" },
      ` · ${m.layer}${m.forgotten_at ? " · dropped" : ""} · importance ${num(m.importance)}`)),
    h("div", {}, h("label", { for: `cat-${key}` }, "Category"), cat),
    h("div", {}, h("label", { for: `imp-${key}` }, "Importance"), imp),
    h("div", {}, h("button", { type: "submit" }, "Fix")),
    m.forgotten_at ? null : h("div", {}, h("button", { type: "button", onclick: async (event) => {
      try {
        await api("DELETE", `/memories/${m.id}`, { query: { reason: "dropped in the extraction log" } });
        event.target.disabled = true;
        announce("Dropped (forgotten; restorable from its page).");
      } catch (error) { showError(error); }
    } }, "Drop")));
  return form;
}
