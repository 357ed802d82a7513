// Memories: a table (sort, filter, search, keyset pages), a timeline grouped by day with a
// per-day chart, and the three layers side by side.

import { api } from "../api.js";
import { navigate } from "../app.js";
import { CATEGORIES, LAYERS, clear, field, h, num, select, short, table, when } from "../dom.js";

const VIEWS = [["table", "Table"], ["timeline", "Timeline"], ["layers", "Layers"]];
const SORTS = [
  ["created_at", "Created"], ["updated_at", "Updated"], ["importance", "Importance"],
  ["access_count", "Times recalled"],
];

export async function render(root, { params }) {
  const view = VIEWS.some(([v]) => v === params.get("view")) ? params.get("view") : "table";
  root.append(h("h1", {}, "Memories"));
  const tabs = h("div", { class: "controls", role: "group", "aria-label": "View" },
    VIEWS.map(([v, text]) => h("button", {
      type: "button", "aria-pressed": String(v === view),
      onclick: () => navigate(`#/memories?view=${v}`),
    }, text)));
  root.append(tabs);
  const body = h("div");
  root.append(body);
  if (view === "timeline") return renderTimeline(body);
  if (view === "layers") return renderLayers(body);
  return renderTable(body, params);
}

function link(memory) {
  return h("a", { href: `#/memory/${memory.id}` }, short(memory.content, 140) || "(empty)");
}

function layerPill(layer) {
  return h("span", { class: `pill ${layer}` }, layer);
}

// ---- table ---------------------------------------------------------------------------------

async function renderTable(root, params) {
  const filters = {
    q: params.get("q") || "",
    layer: params.get("layer") || "",
    category: params.get("category") || "",
    status: params.get("status") || "live",
    since: params.get("since") || "",
    until: params.get("until") || "",
    sort: params.get("sort") || "created_at",
    order: params.get("order") || "desc",
  };
  const form = h("form", { class: "filters", role: "search", "aria-label": "Filter memories",
    onsubmit: (event) => {
      event.preventDefault();
      const data = new FormData(form);
      const query = new URLSearchParams({ view: "table" });
      for (const [k, v] of data.entries()) if (v) query.set(k, v);
      navigate(`#/memories?${query}`);
    } },
    h("div", {}, field("q", "Search text", { type: "search", value: filters.q })),
    h("div", {}, select("layer", "Layer", [["", "any"], ...LAYERS], filters.layer)),
    h("div", {}, select("category", "Category", [["", "any"], ...CATEGORIES], filters.category)),
    h("div", {}, select("status", "Status", ["live", "forgotten", "superseded", "all"], filters.status)),
    h("div", {}, field("since", "Created from", { type: "date", value: filters.since })),
    h("div", {}, field("until", "Created before", { type: "date", value: filters.until })),
    h("div", {}, select("sort", "Sort by", SORTS, filters.sort)),
    h("div", {}, select("order", "Order", [["desc", "descending"], ["asc", "ascending"]], filters.order)),
    h("div", {}, h("button", { type: "submit", class: "primary" }, "Apply")),
  );
  root.append(form);
  const holder = h("div");
  root.append(holder);
  const cursors = [null]; // cursor of each page shown so far (for Previous)
  let total = null;

  async function show(index) {
    const query = { ...filters, limit: 50, cursor: cursors[index] || undefined };
    const started = performance.now();
    const page = await api("GET", "/browse", { query });
    const took = performance.now() - started;
    if (page.total !== null && page.total !== undefined) total = page.total_capped ? `more than ${page.total}` : page.total;
    if (page.next_cursor) cursors[index + 1] = page.next_cursor;
    clear(holder);
    const rows = page.memories.map((m) => h("tr", { dataset: { id: m.id } },
      h("td", {}, when(m.created_at)),
      h("td", {}, layerPill(m.layer)),
      h("td", {}, m.category),
      h("td", { class: "num" }, num(m.importance)),
      h("td", { class: "num" }, m.access_count),
      h("td", { class: "content" }, link(m), m.forgotten_at ? h("span", { class: "muted" }, " (forgotten)") : null),
    ));
    holder.append(table(
      `Page ${index + 1}${typeof total === "number" ? ` of ${Math.max(1, Math.ceil(total / 50))}` : ""}${total !== null ? ` (${total} memories)` : ""}`,
      ["Created (UTC)", "Layer", "Category", "Importance", "Recalled", "Content"],
      rows.length ? rows : [h("tr", {}, h("td", { colspan: 6 }, "No memories match."))],
      { id: "memory-table" },
    ));
    const prev = h("button", { type: "button", disabled: index === 0, onclick: () => show(index - 1) }, "Previous page");
    const next = h("button", { type: "button", id: "next-page", disabled: !page.next_cursor, onclick: () => show(index + 1) }, "Next page");
    holder.append(h("div", { class: "pager" }, prev, next,
      h("span", { class: "muted", id: "page-timing" }, `answered in ${took.toFixed(0)} ms`)));
  }
  await show(0);
}

// ---- timeline ------------------------------------------------------------------------------

async function renderTimeline(root) {
  const counts = await api("GET", "/timeline", { query: { days: 90 } });
  const chartBox = h("figure", { class: "card" },
    h("figcaption", {}, `Memories created per day since ${counts.since} (live ones, by layer)`));
  root.append(chartBox);
  drawDays(chartBox, counts.days);
  const list = h("div", { id: "timeline" });
  root.append(list);
  let cursor = null;
  let lastDay = null;
  let section = null;
  const more = h("button", { type: "button", onclick: () => load() }, "Load older");
  root.append(more);

  async function load() {
    const page = await api("GET", "/browse", { query: { sort: "created_at", order: "desc", limit: 100, cursor: cursor || undefined } });
    for (const m of page.memories) {
      const day = m.created_at.slice(0, 10);
      if (day !== lastDay) {
        lastDay = day;
        section = h("ol", {});
        list.append(h("section", { class: "day", "aria-label": day }, h("h2", {}, day), section));
      }
      section.append(h("li", {}, h("span", { class: "muted" }, m.created_at.slice(11, 16), " "),
        layerPill(m.layer), " ", link(m)));
    }
    cursor = page.next_cursor;
    more.hidden = !cursor;
    if (!page.memories.length && !list.firstChild) list.append(h("p", {}, "No memories yet."));
  }
  await load();
}

const DAY_S = 86400;

// Every day from the first with memories to the last, the days between at zero: uPlot draws
// the points it is given, so a day with none must be given as 0, not left out.
function everyDay(days) {
  const byDay = new Map(days.map((d) => [Date.parse(d.day + "T00:00:00Z") / 1000, d]));
  const first = Math.min(...byDay.keys());
  const last = Math.max(...byDay.keys());
  const filled = [];
  for (let t = first; t <= last; t += DAY_S) filled.push([t, byDay.get(t) || {}]);
  return filled;
}

function drawDays(box, days) {
  if (!days.length || typeof uPlot === "undefined") {
    box.append(h("p", { class: "muted" }, "No memories in this period."));
    return;
  }
  const filled = everyDay(days);
  const xs = filled.map(([t]) => t);
  const series = LAYERS.map((layer) => filled.map(([, d]) => d[layer] || 0));
  // the axis fits the data: its days and one on each side (one day of data sits mid-chart)
  const range = [xs[0] - DAY_S, xs[xs.length - 1] + DAY_S];
  const colours = { working: "#8a5a00", core: "#0b5cad", archive: "#5a4a78" };
  const total = days.reduce((s, d) => s + d.total, 0);
  const holder = h("div", { role: "img", "aria-label": `Chart: memories per day, ${total} in all` });
  box.append(holder);
  const width = Math.max(320, Math.min(1200, box.clientWidth - 24 || 900));
  const spanDays = (range[1] - range[0]) / DAY_S;
  // the label says the range uPlot drew, for screen readers (and the browser test)
  const day = (t) => new Date(t * 1000).toISOString().slice(0, 10);
  const describe = (u) => holder.setAttribute("aria-label",
    `Chart: memories per day from ${day(u.scales.x.min)} to ${day(u.scales.x.max)}, ${total} in all`);
  new uPlot({
    width, height: 220, legend: { show: false },
    tzDate: (t) => uPlot.tzDate(new Date(t * 1000), "Etc/UTC"), // the days are UTC days
    scales: { x: { time: true, range: () => range } },
    hooks: { draw: [describe] },
    series: [{}, ...LAYERS.map((layer) => ({
      label: layer, stroke: colours[layer], width: 2, points: { show: xs.length < 40, size: 6 },
    }))],
    axes: [
      // whole days only: no hour ticks on a short range
      { space: 60, incrs: [DAY_S, 2 * DAY_S, 7 * DAY_S, 14 * DAY_S, 30 * DAY_S], values: (u, ticks) => ticks.map(dayLabel(spanDays)) },
      { label: "memories" },
    ],
  }, [xs, ...series], holder);
  box.append(h("p", { class: "muted" }, LAYERS.map((l) => `${l}: ${series[LAYERS.indexOf(l)].reduce((a, b) => a + b, 0)}`).join(" · ")));
}

function dayLabel(spanDays) {
  return (t) => {
    const iso = new Date(t * 1000).toISOString();
    return spanDays > 300 ? iso.slice(0, 7) : iso.slice(5, 10);
  };
}

// ---- layers --------------------------------------------------------------------------------

async function renderLayers(root) {
  const grid = h("div", { class: "columns" });
  root.append(grid);
  await Promise.all(LAYERS.map(async (layer) => {
    const list = h("ol", {});
    const card = h("section", { class: "card", "aria-labelledby": `col-${layer}` },
      h("h2", { id: `col-${layer}` }, layer), list);
    grid.append(card);
    let cursor = null;
    const more = h("button", { type: "button", onclick: () => load() }, `More ${layer}`);
    card.append(more);
    async function load() {
      const page = await api("GET", "/browse", { query: { layer, sort: "importance", order: "desc", limit: 25, cursor: cursor || undefined } });
      for (const m of page.memories) {
        list.append(h("li", {}, link(m), h("span", { class: "muted" }, ` · ${m.category} · ${num(m.importance)}`)));
      }
      if (page.total !== null && page.total !== undefined) card.querySelector("h2").textContent = `${layer} (${page.total})`;
      cursor = page.next_cursor;
      more.hidden = !cursor;
    }
    await load();
  }));
  // keep the column order stable whatever answered first
  for (const layer of LAYERS) grid.append(grid.querySelector(`[aria-labelledby="col-${layer}"]`));
}
