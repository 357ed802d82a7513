// System: counts per layer and agent, recall latency p50/p95/p99 over the last hour and day,
// LLM and embedding calls and tokens (with a cost estimate at your price), storage, health
// (doctor's parts) and the settings in force, secrets masked.

import { api } from "../api.js";
import { bytes, h, num, table } from "../dom.js";

export async function render(root) {
  root.append(h("h1", {}, "System"));
  const r = await api("GET", "/system");
  const m = r.memories;
  root.append(h("div", { class: "columns" },
    h("section", { class: "card", "aria-labelledby": "counts-h" }, h("h2", { id: "counts-h" }, `Memories of ${r.agent_id}`),
      table("By layer", ["Layer", "Memories"], Object.entries(m.by_layer).map(([k, v]) => h("tr", {}, h("td", {}, k), h("td", { class: "num" }, v)))),
      h("p", {}, `${m.total} in all; ${m.forgotten} forgotten, ${m.superseded} superseded.`)),
    h("section", { class: "card", "aria-labelledby": "agents-h" }, h("h2", { id: "agents-h" }, "Agents"),
      table("Memories per agent", ["Agent", "Memories"], r.agents.map((a) => h("tr", {}, h("td", {}, a.agent_id), h("td", { class: "num" }, a.memories))))),
    h("section", { class: "card", "aria-labelledby": "lat-h" }, h("h2", { id: "lat-h" }, "Recall latency"),
      table("Milliseconds, recalls served by this process", ["Window", "Recalls", "p50", "p95", "p99", "max"],
        Object.entries(r.recall_latency_ms).map(([w, s]) => h("tr", { dataset: { window: w } }, h("td", {}, `last ${w}`),
          h("td", { class: "num" }, s.count), ["p50", "p95", "p99", "max"].map((k) => h("td", { class: "num" }, num(s[k], 1))))))),
    usage(r),
    // storage and settings are the admin's: an agent token's report leaves them out
    r.storage && h("section", { class: "card", "aria-labelledby": "store-h" }, h("h2", { id: "store-h" }, "Storage"),
      table("Files", ["File", "Size"], Object.entries(r.storage.bytes).map(([k, v]) => h("tr", {}, h("td", {}, k.replace("db_", "db-")), h("td", { class: "num" }, bytes(v))))),
      h("p", {}, `${r.storage.pages} pages of ${bytes(r.storage.page_size)}, ${r.storage.free_pages} free.`)),
  ));
  if (r.health) {
    root.append(h("section", { "aria-labelledby": "health-h" }, h("h2", { id: "health-h" }, `Health: ${r.health.status}`),
      table("What doctor checks, for this server", ["Part", "Status", "Detail"],
        r.health.parts.map((p) => h("tr", {}, h("td", {}, p.part), h("td", {}, p.status), h("td", { class: "content" }, p.detail))))));
  }
  if (r.settings) {
    root.append(h("section", { "aria-labelledby": "settings-h" }, h("h2", { id: "settings-h" }, "Settings in force (secrets masked)"),
      h("pre", { class: "json", id: "settings", tabindex: 0 }, JSON.stringify(r.settings, null, 2))));
  }
}

function usage(r) {
  const llm = r.llm.counts || {};
  const prompt = llm.prompt_tokens || 0;
  const price = h("input", { id: "price", type: "number", min: 0, step: 0.01, value: localStorage.getItem("cortex.price") || "0.15" });
  const cost = h("output", { for: "price", id: "cost" });
  const update = () => {
    localStorage.setItem("cortex.price", price.value);
    cost.textContent = `≈ $${((prompt / 1e6) * Number(price.value || 0)).toFixed(4)} for ${prompt} prompt tokens`;
  };
  price.addEventListener("input", update);
  update();
  return h("section", { class: "card", "aria-labelledby": "use-h" }, h("h2", { id: "use-h" }, "LLM and embeddings"),
    table("Calls since the database was created (LLM) or this process started (embeddings)", ["What", "Value"], [
      h("tr", {}, h("td", {}, "LLM providers"), h("td", {}, r.llm.providers.join(", ") || "none")),
      // the counts over every agent are the admin's (an agent token's report leaves them out)
      r.llm.counts && [
        h("tr", {}, h("td", {}, "LLM calls"), h("td", { class: "num" }, llm.calls || 0)),
        h("tr", {}, h("td", {}, "LLM failures"), h("td", { class: "num" }, llm.failures || 0)),
        h("tr", {}, h("td", {}, "LLM prompt tokens"), h("td", { class: "num" }, prompt))],
      h("tr", {}, h("td", {}, "Embedding providers"), h("td", {}, r.embeddings.providers.join(", ") || "none")),
      r.embeddings.calls !== undefined && [
        h("tr", {}, h("td", {}, "Embedding calls"), h("td", { class: "num" }, r.embeddings.calls)),
        h("tr", {}, h("td", {}, "Cached embeddings"), h("td", { class: "num" }, r.embeddings.cache_rows))],
    ]),
    h("div", { class: "controls" }, h("div", {}, h("label", { for: "price" }, "Your LLM price, $ per million prompt tokens"), price), h("div", {}, cost)),
    [...r.llm.notes, ...r.embeddings.notes].map((n) => h("p", { class: "muted" }, n)));
}
