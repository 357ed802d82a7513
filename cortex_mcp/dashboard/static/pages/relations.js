// Relations: the agent's entity graph laid out by d3-force and drawn as SVG (each entity a
// focusable button); choosing one lists its relations and the memories that mention it.

import { api } from "../api.js";
import { clear, h, short, table } from "../dom.js";

const SVG = "http://www.w3.org/2000/svg";
const WIDTH = 960;
const HEIGHT = 520;

function s(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  for (const c of children) el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return el;
}

export async function render(root) {
  root.append(h("h1", {}, "Relations"));
  const { relations } = await api("GET", "/relations", { query: { limit: 500 } });
  if (!relations.length) {
    root.append(h("p", {}, "No relations yet: ingest extracts them from conversations, or POST /api/v1/relations adds one."));
    return;
  }
  const names = [...new Set(relations.flatMap((r) => [r.subject, r.object]))];
  const nodes = names.map((name) => ({ id: name, degree: 0 }));
  const byName = new Map(nodes.map((n) => [n.id, n]));
  const links = relations.map((r) => {
    byName.get(r.subject).degree += 1;
    byName.get(r.object).degree += 1;
    return { source: r.subject, target: r.object, predicate: r.predicate };
  });
  layout(nodes, links);

  const panel = h("section", { id: "entity-panel", "aria-live": "polite" },
    h("p", { class: "muted" }, "Choose an entity (click, or Tab to it and press Enter) to see its relations and memories."));
  const svg = s("svg", { class: "graph", viewBox: `0 0 ${WIDTH} ${HEIGHT}`, role: "group",
    "aria-label": `Entity graph: ${nodes.length} entities, ${links.length} relations` });
  const edges = s("g", { "aria-hidden": "true" });
  for (const link of links) {
    edges.append(s("line", { x1: link.source.x, y1: link.source.y, x2: link.target.x, y2: link.target.y }));
    edges.append(s("text", { class: "edge-label", x: (link.source.x + link.target.x) / 2, y: (link.source.y + link.target.y) / 2 }, link.predicate));
  }
  svg.append(edges);
  for (const node of nodes) {
    const g = s("g", { class: "node", tabindex: 0, role: "button", "aria-label": `${node.id}, ${node.degree} relation${node.degree === 1 ? "" : "s"}`,
      transform: `translate(${node.x},${node.y})`, "data-entity": node.id });
    g.append(s("circle", { r: 6 + Math.min(10, node.degree * 2) }), s("text", { x: 12, y: 4 }, short(node.id, 40)));
    const choose = () => {
      for (const other of svg.querySelectorAll(".node.selected")) other.classList.remove("selected");
      g.classList.add("selected");
      showEntity(panel, node.id, relations);
    };
    g.addEventListener("click", choose);
    g.addEventListener("keydown", (event) => {
      if (event.key === "Enter" || event.key === " ") {
        event.preventDefault();
        choose();
      }
    });
    svg.append(g);
  }
  root.append(svg, panel);
  root.append(table(`All ${relations.length} relations`, ["Subject", "Predicate", "Object", "Updated"],
    relations.map((r) => h("tr", {}, h("td", {}, r.subject), h("td", {}, r.predicate), h("td", {}, r.object),
      h("td", {}, (r.updated_at || "").slice(0, 10))))));
}

// a settled layout computed up front (no animation: the picture is stable and testable)
function layout(nodes, links) {
  const sim = d3.forceSimulation(nodes)
    .force("link", d3.forceLink(links).id((d) => d.id).distance(110))
    .force("charge", d3.forceManyBody().strength(-320))
    .force("center", d3.forceCenter(WIDTH / 2, HEIGHT / 2))
    .force("collide", d3.forceCollide(28))
    .stop();
  for (let i = 0; i < 300; i += 1) sim.tick();
  for (const n of nodes) {
    n.x = Math.max(20, Math.min(WIDTH - 120, n.x));
    n.y = Math.max(20, Math.min(HEIGHT - 20, n.y));
  }
}

async function showEntity(panel, name, relations) {
  clear(panel);
  panel.append(h("h2", {}, name));
  const mine = relations.filter((r) => r.subject === name || r.object === name);
  panel.append(h("ul", {}, mine.map((r) => h("li", {}, `${r.subject} — ${r.predicate} → ${r.object}`))));
  const sources = [...new Set(mine.map((r) => r.source_memory_id).filter(Boolean))];
  const found = await api("GET", "/browse", { query: { q: name, limit: 20 } }).catch(() => ({ memories: [] }));
  const ids = new Set(found.memories.map((m) => m.id));
  const list = h("ul", {}, found.memories.map((m) => h("li", {}, h("a", { href: `#/memory/${m.id}` }, short(m.content, 120)))));
  for (const id of sources) if (!ids.has(id)) list.append(h("li", {}, h("a", { href: `#/memory/${id}` }, `memory ${id} (the relation came from it)`)));
  panel.append(h("h3", {}, "Memories that mention it"), list.childElementCount ? list : h("p", {}, "None."));
}
