// Entities and relations: the agent's entities (GET /entities) and the relations between them
// (GET /relations), laid out by d3-force and drawn as SVG (each node a focusable button). An
// entity opens its page: what it is, what else it is called, and the memories about it (POST
// /search with its name, which lifts the memories linked to it; no access is counted). A
// relation's end that is no entity is drawn too, and lists its relations and the memories that
// mention it.

import { api } from "../api.js";
import { clear, day, h, short, table } from "../dom.js";

const SVG = "http://www.w3.org/2000/svg";
const WIDTH = 960;
const HEIGHT = 520;
const MOST_ENTITIES = 200;

function s(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  for (const c of children) el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return el;
}

// nodes for every entity and every relation end; an end that is an entity's name or alias is
// that entity's node
export function graphOf(entities, relations) {
  const nodes = entities.map((e) => ({ id: e.name, entity: e, degree: 0 }));
  const byKey = new Map();
  for (const node of nodes) {
    for (const name of [node.entity.name, ...(node.entity.aliases || [])]) {
      if (!byKey.has(name.toLowerCase())) byKey.set(name.toLowerCase(), node);
    }
  }
  const nodeOf = (name) => {
    let node = byKey.get(name.toLowerCase());
    if (!node) {
      node = { id: name, entity: null, degree: 0 };
      nodes.push(node);
      byKey.set(name.toLowerCase(), node);
    }
    return node;
  };
  const links = relations.map((r) => {
    const source = nodeOf(r.subject);
    const target = nodeOf(r.object);
    source.degree += 1;
    target.degree += 1;
    return { source: source.id, target: target.id, predicate: r.predicate };
  });
  return { nodes, links };
}

export async function render(root) {
  root.append(h("h1", {}, "Entities"));
  const [{ relations }, listed] = await Promise.all([
    api("GET", "/relations", { query: { limit: 500 } }),
    api("GET", "/entities", { query: { limit: MOST_ENTITIES } }).catch(() => ({ entities: [] })),
  ]);
  const entities = listed.entities || [];
  if (!relations.length && !entities.length) {
    root.append(h("p", {}, "No entities yet: names are found in what is remembered or ingested; POST /api/v1/relations adds a relation."));
    return;
  }
  const { nodes, links } = graphOf(entities, relations);
  layout(nodes, links);

  const panel = h("section", { id: "entity-panel", "aria-live": "polite" },
    h("p", { class: "muted" }, "Choose an entity (click, or Tab to it and press Enter) to see its page and memories."));
  const svg = s("svg", { class: "graph", viewBox: `0 0 ${WIDTH} ${HEIGHT}`, role: "group",
    "aria-label": `Entity graph: ${nodes.length} entities, ${links.length} relations` });
  const edges = s("g", { "aria-hidden": "true" });
  for (const link of links) {
    edges.append(s("line", { x1: link.source.x, y1: link.source.y, x2: link.target.x, y2: link.target.y }));
    edges.append(s("text", { class: "edge-label", x: (link.source.x + link.target.x) / 2, y: (link.source.y + link.target.y) / 2 }, link.predicate));
  }
  svg.append(edges);
  for (const node of nodes) {
    const kind = node.entity ? `${node.entity.kind}, ` : "";
    const count = node.entity ? node.entity.mention_count || 0 : node.degree;
    const g = s("g", { class: node.entity ? `node ${node.entity.kind}` : "node", tabindex: 0, role: "button",
      "aria-label": `${node.id}, ${kind}${count} ${node.entity ? "memories" : "relations"}`,
      transform: `translate(${node.x},${node.y})`, "data-entity": node.id });
    g.append(s("circle", { r: 6 + Math.min(10, Math.sqrt(count) * 2) }), s("text", { x: 12, y: 4 }, short(node.id, 40)));
    const choose = () => {
      for (const other of svg.querySelectorAll(".node.selected")) other.classList.remove("selected");
      g.classList.add("selected");
      if (node.entity) showPage(panel, node.entity, relations);
      else showEntity(panel, node.id, relations);
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
  if (relations.length) {
    root.append(table(`All ${relations.length} relations`, ["Subject", "Predicate", "Object", "Updated"],
      relations.map((r) => h("tr", {}, h("td", {}, r.subject), h("td", {}, r.predicate), h("td", {}, r.object),
        h("td", {}, day(r.updated_at))))));
  }
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

// an entity's page: its kind, aliases, summary and dates, its relations, and the memories about
// it (those linked to it first, as recall ranks them)
async function showPage(panel, entity, relations) {
  clear(panel);
  panel.append(h("h2", {}, entity.name));
  const facts = [entity.kind];
  if ((entity.aliases || []).length) facts.push(`also called ${entity.aliases.join(", ")}`);
  if (entity.first_seen) facts.push(`${day(entity.first_seen)} – ${day(entity.last_seen)}`);
  panel.append(h("p", { class: "muted" }, facts.join(" · ")));
  if (entity.summary) panel.append(h("p", {}, entity.summary));
  const names = new Set([entity.name, ...(entity.aliases || [])].map((n) => n.toLowerCase()));
  const mine = relations.filter((r) => names.has(r.subject.toLowerCase()) || names.has(r.object.toLowerCase()));
  if (mine.length) panel.append(h("ul", {}, mine.map((r) => h("li", {}, `${r.subject} — ${r.predicate} → ${r.object}`))));
  const found = await api("POST", "/search", { body: { query: entity.name, limit: 20 } }).catch(() => ({ results: [] }));
  const about = found.results.filter((m) => (m.entities || []).includes(entity.name));
  const list = h("ul", {}, about.map((m) => h("li", {}, h("a", { href: `#/memory/${m.id}` }, short(m.content, 120)),
    h("span", { class: "muted" }, ` ${day(m.occurred_at)} · ${m.kind}`))));
  panel.append(h("h3", {}, "Memories about it"), about.length ? list : h("p", {}, "None."));
}
