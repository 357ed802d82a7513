// Memories: a table (sort, filter, search, keyset pages), a timeline of when they happened
// (a chart whose axis fits them, and a list grouped by day), and the three layers side by side.

import { api } from "../api.js";
import { navigate } from "../app.js";
import { CATEGORIES, LAYERS, clear, day, field, h, num, occurred, select, short, table, when } from "../dom.js";

const VIEWS = [["table", "Table"], ["timeline", "Timeline"], ["layers", "Layers"]];
const SORTS = [
  ["created_at", "Stored"], ["occurred_at", "Occurred"], ["updated_at", "Updated"], ["importance", "Importance"],
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
  if (view === "timeline") return renderTimeline(body, params);
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
    occurred_since: params.get("occurred_since") || "",
    occurred_until: params.get("occurred_until") || "",
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
    h("div", {}, field("since", "Stored from", { type: "date", value: filters.since })),
    h("div", {}, field("until", "Stored before", { type: "date", value: filters.until })),
    h("div", {}, field("occurred_since", "Occurred from", { type: "date", value: filters.occurred_since })),
    h("div", {}, field("occurred_until", "Occurred before", { type: "date", value: filters.occurred_until })),
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
      h("td", {}, occurred(m.occurred_at)),
      h("td", {}, when(m.created_at)),
      h("td", {}, layerPill(m.layer)),
      h("td", {}, m.category),
      h("td", { class: "num" }, num(m.importance)),
      h("td", { class: "num" }, m.access_count),
      h("td", { class: "content" }, link(m), m.forgotten_at ? h("span", { class: "muted" }, " (forgotten)") : null),
    ));
    holder.append(table(
      `Page ${index + 1}${typeof total === "number" ? ` of ${Math.max(1, Math.ceil(total / 50))}` : ""}${total !== null ? ` (${total} memories)` : ""}`,
      ["Occurred (UTC)", "Stored (UTC)", "Layer", "Category", "Importance", "Recalled", "Content"],
      rows.length ? rows : [h("tr", {}, h("td", { colspan: 7 }, "No memories match."))],
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

// The chart places memories by when they happened (occurred_at), in buckets the server sizes to
// the span shown (day, week, month, year); a few far outliers are left off the chart and
// counted under it, with a button that shows them too. The list below runs by the same time.
async function renderTimeline(root, params) {
  const fit = params.get("fit") === "all" ? "all" : "auto";
  const data = await api("GET", "/timeline", { query: { fit } });
  const caption = data.total
    ? `When the memories happened (occurred, UTC), per ${data.granularity}, ${data.start} to ${data.end} (live ones, by layer)`
    : "When the memories happened (occurred, UTC)";
  const chartBox = h("figure", { class: "card" }, h("figcaption", {}, caption));
  root.append(chartBox);
  drawBuckets(chartBox, data);
  root.append(offChart(data, fit));
  const list = h("div", { id: "timeline" });
  root.append(list);
  let cursor = null;
  let lastDay = null;
  let section = null;
  const more = h("button", { type: "button", onclick: () => load() }, "Load older");
  root.append(more);

  async function load() {
    const page = await api("GET", "/browse", { query: { sort: "occurred_at", order: "desc", limit: 100, cursor: cursor || undefined } });
    for (const m of page.memories) {
      const itsDay = day(m.occurred_at);
      if (itsDay !== lastDay) {
        lastDay = itsDay;
        section = h("ol", {});
        list.append(h("section", { class: "day", "aria-label": itsDay }, h("h2", {}, itsDay), section));
      }
      const said = occurred(m.occurred_at);
      section.append(h("li", { dataset: { id: m.id, occurred: m.occurred_at } },
        h("span", { class: "muted" }, said.length > 10 ? said.slice(11, 16) : "", " "),
        layerPill(m.layer), " ", link(m)));
    }
    cursor = page.next_cursor;
    more.hidden = !cursor;
    if (!page.memories.length && !list.firstChild) list.append(h("p", {}, "No memories yet."));
  }
  await load();
}

function offChart(data, fit) {
  const { before, after } = data.off_chart;
  const note = h("p", { id: "off-chart", class: "muted" });
  if (before || after) {
    const parts = [];
    if (before) parts.push(`${before} earlier ${before === 1 ? "memory" : "memories"} (from ${data.earliest})`);
    if (after) parts.push(`${after} later ${after === 1 ? "memory" : "memories"} (to ${data.latest})`);
    const verb = before + after === 1 ? "lies" : "lie";
    note.append(`${parts.join(" and ")} ${verb} far from the rest and ${before + after === 1 ? "is" : "are"} not on the chart. `,
      h("button", { type: "button", id: "show-all", onclick: () => navigate("#/memories?view=timeline&fit=all") }, "Show them too"));
  } else if (fit === "all" && data.total) {
    note.append("Every memory is on the chart. ",
      h("button", { type: "button", onclick: () => navigate("#/memories?view=timeline") }, "Fit to most memories"));
  }
  return note;
}

const DAY_S = 86400;
const BUCKET_S = { day: DAY_S, week: 7 * DAY_S, month: 31 * DAY_S, year: 366 * DAY_S };

function drawBuckets(box, data) {
  if (!data.buckets.length || typeof uPlot === "undefined") {
    box.append(h("p", { class: "muted" }, "No memories yet."));
    return;
  }
  const unit = data.granularity;
  const xs = data.buckets.map((b) => Date.parse(b.start + "T00:00:00Z") / 1000);
  const series = LAYERS.map((layer) => data.buckets.map((b) => b[layer] || 0));
  // a bucket with none of a layer draws nothing for it: three lines at 0 drew over each other
  const drawn = series.map((counts) => counts.map((n) => n || null));
  const most = Math.max(1, ...series.flat());
  // the axis fits the data: its buckets and one on each side (one bucket sits mid-chart)
  const range = [xs[0] - BUCKET_S[unit], xs[xs.length - 1] + BUCKET_S[unit]];
  const colours = { working: "#8a5a00", core: "#0b5cad", archive: "#5a4a78" };
  const holder = h("div", { role: "img", "aria-label": `Chart: memories per ${unit}, ${data.total} in all` });
  box.append(holder);
  const width = Math.max(320, Math.min(1200, box.clientWidth - 24 || 900));
  // the label says the range uPlot drew, for screen readers (and the browser test)
  const day = (t) => new Date(t * 1000).toISOString().slice(0, 10);
  const describe = (u) => holder.setAttribute("aria-label",
    `Chart: memories per ${unit} by when they happened, from ${day(u.scales.x.min)} to ${day(u.scales.x.max)}, ${data.total} in all`);
  const label = bucketLabel(unit, data.start.slice(0, 4) !== data.end.slice(0, 4));
  holder.plot = new uPlot({ // kept on its element: the browser test reads what was drawn
    width, height: 220, legend: { show: false },
    tzDate: (t) => uPlot.tzDate(new Date(t * 1000), "Etc/UTC"), // the buckets are UTC days
    // counts: from 0, ticks on whole memories only (2.5 memories is no count)
    scales: { x: { time: true, range: () => range }, y: { range: () => [0, most + Math.ceil(most / 10)] } },
    hooks: { draw: [describe] },
    series: [{}, ...LAYERS.map((layer) => ({
      label: layer, stroke: colours[layer], width: 2, dash: DASHES[layer],
      spanGaps: false, points: { show: true, size: xs.length < 40 ? 6 : 4 },
    }))],
    axes: [
      // a tick on a bucket's start only, as many as fit (about one per 80 px)
      { space: 60, splits: () => thinned(xs, Math.max(2, Math.floor(width / 80))), values: (u, ticks) => labelled(holder, ticks.map(label)) },
      { label: "memories", incrs: WHOLE_STEPS, values: (u, ticks) => countLabels(holder, ticks) },
    ],
  }, [xs, ...drawn], holder);
  holder.dataset.granularity = unit;
  box.append(legend(series));
}

const WHOLE_STEPS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000, 100000, 200000, 500000, 1000000];
const DASHES = { core: [], working: [8, 4], archive: [2, 3] }; // told apart where lines meet

// the labels are drawn on the canvas: kept on the chart's element too (for the browser test)
function countLabels(holder, ticks) {
  const labels = ticks.map((t) => String(Math.round(t)));
  holder.dataset.yticks = labels.join(" ");
  return labels;
}

// which line is which layer, with each layer's count (the canvas has no text for it)
function legend(series) {
  return h("ul", { class: "legend", "aria-label": "Layers" }, LAYERS.map((layer, i) =>
    h("li", { dataset: { layer } }, h("span", { class: `swatch ${layer}`, "aria-hidden": "true" }),
      `${layer}: ${series[i].reduce((a, b) => a + b, 0)}`)));
}

// the labels are drawn on the canvas: kept on the chart's element too (for the browser test)
function labelled(holder, labels) {
  holder.dataset.ticks = labels.join(" ");
  return labels;
}

function thinned(xs, most) {
  const step = Math.ceil(xs.length / most);
  return xs.filter((_, i) => i % step === 0);
}

function bucketLabel(unit, yearsDiffer) {
  return (t) => {
    const iso = new Date(t * 1000).toISOString();
    if (unit === "year") return iso.slice(0, 4);
    if (unit === "month") return iso.slice(0, 7);
    return yearsDiffer ? iso.slice(0, 10) : iso.slice(5, 10);
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
