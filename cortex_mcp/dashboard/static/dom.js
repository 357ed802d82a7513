// DOM helpers: elements are built with textContent only, never innerHTML, so memory contents
// (user data) can never become markup.

export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on") && typeof value === "function") {
      el.addEventListener(key.slice(2), value);
    } else if (key === "dataset") {
      Object.assign(el.dataset, value);
    } else if (value === true) {
      el.setAttribute(key, "");
    } else {
      el.setAttribute(key, String(value));
    }
  }
  append(el, children);
  return el;
}

export function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

export function clear(el) {
  while (el.firstChild) el.removeChild(el.firstChild);
  return el;
}

export function short(text, limit = 160) {
  if (!text) return "";
  return text.length > limit ? text.slice(0, limit - 1) + "…" : text;
}

// Times are shown on the user's clock: the server's CORTEX_TIMEZONE (setZone, from /agents).
let zone = "UTC";
let formatter = null;

export function setZone(name) {
  try {
    formatter = new Intl.DateTimeFormat("en-CA", {
      timeZone: name || "UTC", year: "numeric", month: "2-digit", day: "2-digit",
      hour: "2-digit", minute: "2-digit", second: "2-digit", hourCycle: "h23",
    });
    zone = name || "UTC";
  } catch {
    formatter = null; // a zone this browser does not know: UTC, as stored
    zone = "UTC";
  }
}

export function zoneName() {
  return zone;
}

function wallClock(iso) {
  const moment = new Date(iso);
  if (!formatter || Number.isNaN(moment.getTime())) return null;
  const parts = Object.fromEntries(formatter.formatToParts(moment).map((p) => [p.type, p.value]));
  return { day: `${parts.year}-${parts.month}-${parts.day}`, time: `${parts.hour}:${parts.minute}:${parts.second}` };
}

export function when(iso) {
  if (!iso) return "—";
  const local = wallClock(iso);
  return local ? `${local.day} ${local.time}` : iso.replace("T", " ").slice(0, 19);
}

// When something happened: a date given as a day (the user's midnight) shows as the day alone,
// without a time no one said.
export function occurred(iso) {
  if (!iso) return "—";
  const local = wallClock(iso);
  if (!local) return iso.replace("T", " ").slice(0, 19);
  return local.time === "00:00:00" ? local.day : `${local.day} ${local.time}`;
}

export function day(iso) {
  if (!iso) return "";
  const local = wallClock(iso);
  return local ? local.day : iso.slice(0, 10);
}

export function num(value, digits = 2) {
  if (value === null || value === undefined) return "—";
  return typeof value === "number" ? value.toFixed(digits) : String(value);
}

export function bytes(n) {
  if (!n) return "0 B";
  const units = ["B", "KB", "MB", "GB", "TB"];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024;
    i += 1;
  }
  return `${n.toFixed(i ? 1 : 0)} ${units[i]}`;
}

// a <select> with a visible label; options are [value, text] pairs or strings
export function select(id, label, options, value, attrs = {}) {
  const sel = h("select", { id, name: id, ...attrs });
  for (const opt of options) {
    const [v, text] = Array.isArray(opt) ? opt : [opt, opt];
    const o = h("option", { value: v }, text);
    if (String(v) === String(value ?? "")) o.selected = true;
    sel.append(o);
  }
  return [h("label", { for: id }, label), sel];
}

export function field(id, label, attrs = {}) {
  return [h("label", { for: id }, label), h("input", { id, name: id, ...attrs })];
}

export function table(caption, headers, rows, attrs = {}) {
  return h(
    "table",
    attrs,
    h("caption", {}, caption),
    h("thead", {}, h("tr", {}, headers.map((x) => h("th", { scope: "col" }, x)))),
    h("tbody", {}, rows),
  );
}

// a bar 0..1 with its number beside it (for scores)
export function bar(value, label) {
  const v = Math.max(0, Math.min(1, Number(value) || 0));
  return h(
    "span",
    { class: "bar" },
    h("span", { class: "bar-track", "aria-hidden": "true" },
      h("span", { class: "bar-fill", style: `width:${(v * 100).toFixed(1)}%` })),
    h("span", { class: "bar-num" }, label ?? num(value, 3)),
  );
}

export const LAYERS = ["working", "core", "archive"];
export const CATEGORIES = [
  "identity", "preference", "decision", "fact", "insight", "todo", "correction", "skill",
  "relationship", "project_state", "context", "summary", "profile",
];
