// Search debugger: one query, every ranking stage per hit (text, vector, fused, layer weight,
// recency, access, decay, final; the time boost when the query names a time), under two
// settings side by side.

import { api } from "../api.js";
import { navigate, showError } from "../app.js";
import { bar, day, field, h, num, select, short, table } from "../dom.js";

const MODES = [["hybrid", "hybrid (text + vector)"], ["text", "text only"], ["vector", "vector only"]];
const FUSIONS = [["", "server setting"], "maxnorm", "minmax", "weighted", "rrf"];
export const STAGES = ["text", "vector", "fused", "layer_weight", "recency", "access", "decay", "final"];

export async function render(root, { params }) {
  root.append(h("h1", {}, "Search debugger"));
  const query = params.get("q") || "";
  const variants = ["a", "b"].map((key, i) => ({
    key,
    mode: params.get(`${key}_mode`) || (i === 0 ? "text" : "hybrid"),
    fusion: params.get(`${key}_fusion`) || "",
    mmr: params.get(`${key}_mmr`) === "1",
  }));
  const form = h("form", { class: "filters", role: "search", "aria-label": "Debug a search",
    onsubmit: (event) => {
      event.preventDefault();
      const data = new FormData(form);
      const next = new URLSearchParams();
      for (const [k, v] of data.entries()) if (v) next.set(k, v);
      navigate(`#/search?${next}`);
    } },
    h("div", {}, field("q", "Query", { type: "search", value: query, required: true, size: 40 })),
    variants.map((v) => [
      h("div", {}, select(`${v.key}_mode`, `Setting ${v.key.toUpperCase()}: channels`, MODES, v.mode)),
      h("div", {}, select(`${v.key}_fusion`, `Setting ${v.key.toUpperCase()}: fusion`, FUSIONS, v.fusion)),
      h("div", {}, h("label", { for: `${v.key}_mmr` }, `Setting ${v.key.toUpperCase()}: MMR`),
        h("input", { type: "checkbox", id: `${v.key}_mmr`, name: `${v.key}_mmr`, value: "1", checked: v.mmr })),
    ]),
    h("div", {}, h("button", { type: "submit", class: "primary" }, "Search")),
  );
  root.append(form);
  if (!query) {
    root.append(h("p", { class: "muted" }, "Type a query: each hit shows every ranking stage, for two settings side by side."));
    return;
  }
  let answer;
  try {
    answer = await api("POST", "/search/compare", { body: {
      query, limit: 10,
      variants: variants.map((v) => ({ mode: v.mode, fusion: v.fusion || null, mmr: v.mmr })),
    } });
  } catch (error) {
    return showError(error);
  }
  // one setting above the other, each card as wide as the page: ten columns side by side in
  // half a page cut the table off before the final score
  root.append(h("div", { class: "compare" }, answer.variants.map((report, i) => variantColumn(report, variants[i]))));
}

function variantColumn(report, variant) {
  const title = `Setting ${variant.key.toUpperCase()}: ${report.mode}, fusion ${report.settings.fusion}${report.settings.mmr ? ", MMR" : ""}`;
  const section = h("section", { class: "card", "aria-label": title, dataset: { variant: variant.key } }, h("h2", {}, title));
  section.append(h("p", { class: "muted" },
    `channels: ${report.channels.join(" + ") || "none"} · pool ${report.pool} · FTS: ${report.query.fts_expression || "—"}`));
  for (const line of report.degraded || []) section.append(h("p", { class: "error" }, line));
  section.append(h("p", { class: "muted" }, "stage timings (ms): ",
    Object.entries(report.timings_ms).map(([k, v]) => `${k} ${num(v, 1)}`).join(" · ")));
  const named = report.query.time_window;
  if (named) section.append(timeLine(named, (report.facts || {}).time));
  const rows = report.hits.map((hit) => h("tr", { dataset: { id: hit.id } },
    h("th", { scope: "row", class: "num" }, hit.rank),
    h("td", { class: "content" }, h("a", { href: `#/memory/${hit.id}` }, short(hit.content, 90)), " ",
      h("span", { class: "muted" }, hit.layer)),
    h("td", { dataset: { stage: "text" } }, bar(hit.text.normalised, hit.text.bm25 === null ? "—" : `${num(hit.text.normalised, 3)} (bm25 ${num(hit.text.bm25, 2)})`)),
    h("td", { dataset: { stage: "vector" } }, bar(hit.vector.score, num(hit.vector.score, 3))),
    h("td", { dataset: { stage: "fused" } }, bar(hit.fused)),
    h("td", { dataset: { stage: "layer_weight" }, class: "num" }, num(hit.layer_weight, 2)),
    h("td", { dataset: { stage: "recency" }, class: "num" }, num(hit.recency, 3)),
    h("td", { dataset: { stage: "access" }, class: "num" }, num(hit.access, 3)),
    h("td", { dataset: { stage: "decay" }, class: "num" }, num(hit.decay, 3)),
    named ? h("td", { dataset: { stage: "time" }, class: "num" }, num(hit.time_boost, 2)) : null,
    h("td", { dataset: { stage: "final" } }, bar(hit.final)),
  ));
  const headers = ["Rank", "Memory", "Text", "Vector", "Fused", "Layer weight", "Recency", "Access", "Decay",
    ...(named ? ["Time"] : []), "Final"];
  section.append(table(`${report.hits.length} hits, best first`, headers,
    rows.length ? rows : [h("tr", {}, h("td", { colspan: headers.length }, "No hits."))],
    { class: "stages" }));
  return section;
}

// The window the query named, and whether it lifted anything (a window holding none of the
// agent's memories gives its words back to the search).
function timeLine(named, facts) {
  const boosted = facts && !facts.boosted ? " · holds no memory: searched as words" : "";
  return h("p", { class: "muted", dataset: { window: named.expression } },
    `time: “${named.expression}” = ${day(named.start)} to ${day(named.end)} (end excluded, ${named.granularity})${boosted}`);
}
