// Profile: the synthesised profile, and manual edits that survive re-synthesis (a blank field
// clears its manual value, and the generated one shows again).

import { api } from "../api.js";
import { announce, navigate, showError } from "../app.js";
import { h } from "../dom.js";

const TEXT = [["summary", "Summary"], ["language_preferences", "Language preferences"]];
const LISTS = [
  ["domains", "Domains"], ["active_projects", "Active projects"],
  ["high_value_signals", "High-value signals"], ["low_value_signals", "Low-value signals"],
  ["exclude", "Hide these generated items"],
];

export async function render(root) {
  root.append(h("h1", {}, "Profile"));
  const profile = await api("GET", "/profile");
  const manual = profile.manual || {};
  const source = profile.source || {};
  root.append(h("section", { "aria-labelledby": "now-h" },
    h("h2", { id: "now-h" }, "As agents see it"),
    h("pre", { class: "content card", id: "profile-text" }, profile.text || "No profile yet."),
    h("p", { class: "muted" }, `built by ${source.built_by || "—"} at ${source.built_at || "—"}; manual fields: ${(source.manual_fields || []).join(", ") || "none"}`)));
  const inputs = {};
  const form = h("form", { id: "profile-form", onsubmit: async (event) => {
    event.preventDefault();
    const changes = {};
    for (const [name] of TEXT) changes[name] = inputs[name].value;
    for (const [name] of LISTS) changes[name] = inputs[name].value.split("\n").map((v) => v.trim()).filter(Boolean);
    try {
      await api("PATCH", "/profile", { body: changes });
      announce("Profile saved; your edits are kept over what is generated.");
      navigate("#/profile");
    } catch (error) { showError(error); }
  } });
  for (const [name, label] of TEXT) {
    inputs[name] = h("textarea", { id: `p-${name}`, name, rows: name === "summary" ? 3 : 1, cols: 70 }, manual[name] || "");
    form.append(h("div", { class: "card" }, h("label", { for: `p-${name}` }, `${label} (yours)`), h("br"), inputs[name],
      generated(profile, name, manual)));
  }
  for (const [name, label] of LISTS) {
    inputs[name] = h("textarea", { id: `p-${name}`, name, rows: 3, cols: 70 }, (manual[name] || []).join("\n"));
    form.append(h("div", { class: "card" }, h("label", { for: `p-${name}` }, `${label} (yours, one per line)`), h("br"), inputs[name],
      name === "exclude" ? null : generated(profile, name, manual)));
  }
  form.append(h("p", {}, h("button", { type: "submit", class: "primary" }, "Save profile")));
  root.append(h("section", { "aria-labelledby": "edit-h" }, h("h2", { id: "edit-h" }, "Manual edits"), form));
}

function generated(profile, name, manual) {
  const value = profile[name];
  const text = Array.isArray(value) ? value.join("; ") : value;
  if (!text) return null;
  return h("p", { class: "muted" }, `${manual[name] ? "shown (with yours)" : "generated"}: ${text}`);
}
