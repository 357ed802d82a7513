// System: counts per layer and agent, recall latency p50/p95/p99 over the last hour and day,
// LLM and embedding calls and tokens (with a cost estimate at your price), storage, health
// (doctor's parts) and the settings, secrets masked: the admin edits those that change while
// running (PATCH /api/v1/config), each refusal shown beside its field.

import { api, ApiError } from "../api.js";
import { bytes, clear, h, num, table } from "../dom.js";

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
    // the settings are the admin's: an agent token's report leaves them out
    const section = h("section", { id: "settings", "aria-labelledby": "settings-h" });
    root.append(section);
    await settingsForm(section);
  }
}

// ---- settings: the live ones editable, the rest shown (they change at a restart) -----------

function shownValue(row) {
  if (row.value === null) return "";
  return row.kind === "map" ? JSON.stringify(row.value) : String(row.value);
}

function inputFor(row) {
  const id = "set-" + row.name.replaceAll(".", "-");
  const attrs = { id, name: row.name, "aria-describedby": `${id}-error ${id}-about` };
  if (row.kind === "boolean") return h("input", { ...attrs, type: "checkbox", checked: row.value === true });
  if (row.secret) return h("input", { ...attrs, type: "password", autocomplete: "off", placeholder: row.value === null ? "unset" : "set: type to replace" });
  if (row.kind === "map") return h("textarea", { ...attrs, rows: 2 }, shownValue(row));
  const numeric = row.kind === "integer" || row.kind === "number";
  return h("input", { ...attrs, type: "text", inputmode: numeric ? "decimal" : undefined, value: shownValue(row) });
}

// what the field holds, as the setting's kind; undefined when it is unchanged, null when
// emptied (back to the file's or the default value)
function edited(row, input) {
  if (row.kind === "boolean") return input.checked === row.value ? undefined : input.checked;
  const text = input.value;
  if (row.secret) return text === "" ? undefined : text;
  if (text === shownValue(row)) return undefined;
  if (text.trim() === "") return null;
  if ((row.kind === "integer" || row.kind === "number") && !Number.isNaN(Number(text))) return Number(text);
  if (row.kind === "map") {
    try { return JSON.parse(text); } catch { return text; } // the server names the rule
  }
  return text;
}

function documentOf(changes) {
  const doc = {};
  for (const [name, value] of Object.entries(changes)) {
    const dot = name.indexOf(".");
    if (dot < 0) doc[name] = value;
    else (doc[name.slice(0, dot)] ??= {})[name.slice(dot + 1)] = value;
  }
  return doc;
}

// "search.vector_weight: Input should be ...; log_level: ..." -> {name: rule}
function problemsOf(error) {
  const found = {};
  for (const part of error.message.split("; ")) {
    const at = part.indexOf(": ");
    if (at > 0) found[part.slice(0, at)] = part.slice(at + 2);
  }
  if (error.field && !found[error.field]) found[error.field] = error.message;
  return found;
}

async function settingsForm(section) {
  const { settings } = await api("GET", "/config");
  const live = settings.filter((row) => row.live);
  const fixed = settings.filter((row) => !row.live);
  const inputs = new Map();
  const errors = new Map();
  const status = h("p", { id: "settings-status", role: "status" });
  const rows = live.map((row) => {
    const input = inputFor(row);
    const error = h("span", { class: "error", id: `${input.id}-error`, dataset: { for: row.name } });
    inputs.set(row.name, [row, input]);
    errors.set(row.name, error);
    const source = row.api_value !== undefined ? `${row.source}: ${row.variable} wins` : row.source;
    return h("tr", { dataset: { name: row.name } },
      h("td", {}, h("label", { for: input.id }, row.name)),
      h("td", {}, input, " ", error),
      h("td", { class: "muted" }, source),
      h("td", { class: "content", id: `${input.id}-about` }, row.description));
  });
  const form = h("form", { id: "settings-form", novalidate: true },
    table("Settings that change while running (every server of this store within 2 s)", ["Setting", "Value", "Source", "Meaning"], rows),
    h("div", { class: "controls" }, h("button", { type: "submit" }, "Save changes"), status));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    for (const error of errors.values()) error.textContent = "";
    const changes = {};
    for (const [name, [row, input]] of inputs) {
      const value = edited(row, input);
      if (value !== undefined) changes[name] = value;
    }
    if (!Object.keys(changes).length) {
      status.textContent = "Nothing changed.";
      return;
    }
    try {
      const answer = await api("PATCH", "/config", { body: documentOf(changes) });
      const overridden = answer.overridden.map((o) => `${o.name} (${o.variable} wins)`);
      status.textContent = `Saved: ${answer.changed.join(", ") || "nothing in effect changed"}` +
        (overridden.length ? `; kept but overridden: ${overridden.join(", ")}` : "") + ".";
      await redraw(section, status.textContent);
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      const problems = problemsOf(error);
      let shown = false;
      for (const [name, rule] of Object.entries(problems)) {
        const beside = errors.get(name) || errors.get(name.split(".").slice(0, 2).join("."));
        if (beside) {
          beside.textContent = rule;
          shown = true;
        }
      }
      status.textContent = `Not saved, nothing changed: ${shown ? "see the fields marked" : error.message}.`;
    }
  });
  clear(section);
  section.append(
    h("h2", { id: "settings-h" }, "Settings (secrets masked)"),
    form,
    h("details", {}, h("summary", {}, `${fixed.length} more change at a restart (environment or CORTEX_CONFIG file)`),
      table("Settings that change at a restart", ["Setting", "Value", "Source"],
        fixed.map((row) => h("tr", { dataset: { name: row.name } }, h("td", {}, row.name),
          h("td", {}, shownValue(row) || "—"),
          h("td", { class: "muted" }, row.source))))));
}

async function redraw(section, said) {
  await settingsForm(section);
  section.querySelector("#settings-status").textContent = said;
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
