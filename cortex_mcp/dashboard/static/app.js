// The dashboard's shell: sign-in (when the server has a token), the agent selector, and a
// hash router that renders one page module into <main>. One agent at a time: changing it
// re-renders the page and drops answers still in flight for the previous one.

import { api, ApiError, authState, setAgent, SignInNeeded, signIn, signOut } from "./api.js";
import { clear, h, setZone } from "./dom.js";

const PAGES = {
  memories: () => import("./pages/memories.js"),
  memory: () => import("./pages/memory.js"),
  search: () => import("./pages/search.js"),
  relations: () => import("./pages/relations.js"),
  lifecycle: () => import("./pages/lifecycle.js"),
  extraction: () => import("./pages/extraction.js"),
  profile: () => import("./pages/profile.js"),
  system: () => import("./pages/system.js"),
};

const main = document.getElementById("main");
const picker = document.getElementById("agent");
const statusLine = document.getElementById("status");

export function announce(message) {
  statusLine.textContent = message;
  clearTimeout(announce.timer);
  announce.timer = setTimeout(() => (statusLine.textContent = ""), 6000);
}

export function navigate(hash) {
  if (location.hash === hash) route();
  else location.hash = hash;
}

function parseHash() {
  const [path, search] = (location.hash.replace(/^#\/?/, "") || "memories").split("?");
  const [name, ...rest] = path.split("/");
  return { name, arg: rest.join("/"), params: new URLSearchParams(search || "") };
}

async function route() {
  const { name, arg, params } = parseHash();
  const load = PAGES[name] || PAGES.memories;
  for (const link of document.querySelectorAll("#nav a")) {
    const current = link.getAttribute("href") === `#/${name}`;
    if (current) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  clear(main);
  try {
    const page = await load();
    await page.render(main, { arg, params });
  } catch (error) {
    showError(error);
  }
  main.focus({ preventScroll: true });
}

export function showError(error) {
  if (error instanceof SignInNeeded) return showSignIn();
  if (error instanceof ApiError && error.status === 0) return; // agent changed: a new render runs
  clear(main);
  main.append(
    h("h1", {}, "Something went wrong"),
    h("p", { class: "error" }, error.message || String(error)),
  );
}

function showSignIn(message, provider = false) {
  showAccount(false, true);
  clear(main);
  const input = h("input", {
    id: "token", name: "token", type: "password", autocomplete: "current-password", required: true,
  });
  const problem = h("p", { class: "error", id: "signin-error", role: "alert" }, message || "");
  const form = h(
    "form",
    {
      onsubmit: async (event) => {
        event.preventDefault();
        try {
          await signIn(input.value);
          await start();
        } catch (error) {
          problem.textContent = error.message;
          input.focus();
        }
      },
    },
    h("label", { for: "token" }, "Token (the server's admin token CORTEX_API_TOKEN, or an agent token from cortex-mcp token create)"),
    input,
    h("button", { type: "submit", class: "primary" }, "Sign in"),
    problem,
  );
  // with an identity provider configured: its sign-in first, the pasted token still there
  const viaProvider = provider
    ? h("p", {}, h("a", { id: "signin-provider", class: "button primary", href: "/ui/oauth/start" }, "Sign in with your identity provider"))
    : null;
  main.append(
    h("section", { class: "signin" },
      h("h1", {}, "Sign in"),
      viaProvider,
      h("p", {}, "This server needs its API token. It is asked for once; the browser then keeps a session that only this page can use."),
      form),
  );
  input.focus();
}

async function loadAgents() {
  const { agents, default: fallback, timezone } = await api("GET", "/agents");
  setZone(timezone);
  const saved = sessionStorage.getItem("cortex.agent");
  const chosen = agents.some((a) => a.agent_id === saved) ? saved : fallback;
  clear(picker);
  for (const a of agents) {
    const option = h("option", { value: a.agent_id }, `${a.agent_id} (${a.memories})`);
    if (a.agent_id === chosen) option.selected = true;
    picker.append(option);
  }
  picker.disabled = false;
  setAgent(chosen);
}

// The agent selector and "Sign out" belong to a signed-in page: hidden on the sign-in form
const account = document.querySelector(".agent-picker");
const signOutButton = document.getElementById("sign-out");

function showAccount(signedIn, tokenRequired) {
  account.hidden = !signedIn;
  signOutButton.hidden = !(signedIn && tokenRequired);
}

// the skip link moves focus without touching the hash (the router owns it)
document.querySelector(".skip").addEventListener("click", (event) => {
  event.preventDefault();
  main.focus();
});

async function start() {
  const auth = await authState();
  if (auth.token_required && !auth.signed_in) return showSignIn(undefined, auth.provider);
  try {
    await loadAgents();
  } catch (error) {
    return showError(error);
  }
  showAccount(true, auth.token_required);
  if (!start.listening) {
    start.listening = true;
    window.addEventListener("hashchange", route);
  }
  await route();
}

picker.addEventListener("change", () => {
  setAgent(picker.value);
  sessionStorage.setItem("cortex.agent", picker.value);
  announce(`Showing agent ${picker.value}`);
  if (parseHash().name === "memory") navigate("#/memories");
  else route();
});

signOutButton.addEventListener("click", async () => {
  await signOut();
  showSignIn("Signed out.");
});

start();
