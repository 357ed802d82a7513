// The REST client: every request carries the selected agent (X-Cortex-Agent) and the
// dashboard's header, which the session cookie needs (a page of another origin cannot add it).

export class ApiError extends Error {
  constructor(status, message, field) {
    super(message);
    this.status = status;
    this.field = field;
  }
}

export class SignInNeeded extends Error {}

const state = { agent: null, generation: 0 };

export function currentAgent() {
  return state.agent;
}

export function setAgent(agent) {
  state.agent = agent;
  state.generation += 1; // answers for the previous agent are dropped
}

// A header value goes out as bytes, one per character (fetch refuses characters over U+00FF):
// the agent id's UTF-8 bytes, each as one character, which the server reads back as UTF-8.
function utf8Header(text) {
  return String.fromCharCode(...new TextEncoder().encode(text));
}

export async function api(method, path, { query, body } = {}) {
  const url = new URL("/api/v1" + path, location.origin);
  for (const [key, value] of Object.entries(query || {})) {
    if (value !== undefined && value !== null && value !== "") url.searchParams.set(key, value);
  }
  const headers = { "X-Cortex-Dashboard": "1", Accept: "application/json" };
  if (state.agent) headers["X-Cortex-Agent"] = utf8Header(state.agent);
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const generation = state.generation;
  const reply = await fetch(url, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: "same-origin",
  });
  const data = await reply.json().catch(() => null);
  if (generation !== state.generation) throw new ApiError(0, "the agent changed meanwhile");
  if (reply.status === 401) throw new SignInNeeded("sign in again");
  if (!reply.ok) {
    const error = (data && data.error) || {};
    throw new ApiError(reply.status, error.message || reply.statusText, error.field);
  }
  return data;
}

export async function authState() {
  const reply = await fetch("/ui/auth", {
    headers: { "X-Cortex-Dashboard": "1" },
    credentials: "same-origin",
  });
  return reply.json();
}

export async function signIn(token) {
  const reply = await fetch("/ui/session", {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-Cortex-Dashboard": "1" },
    body: JSON.stringify({ token }),
    credentials: "same-origin",
  });
  const data = await reply.json().catch(() => ({}));
  if (!reply.ok) throw new ApiError(reply.status, (data.error || {}).message || "sign-in failed");
  return data;
}

export async function signOut() {
  await fetch("/ui/session", {
    method: "DELETE",
    headers: { "X-Cortex-Dashboard": "1" },
    credentials: "same-origin",
  });
}
