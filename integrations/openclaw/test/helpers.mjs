// Shared pieces of the plugin tests: a real `cortex-mcp serve` on a free loopback port, servers
// that are down or hang, and a host object that records what the plugin registers.

import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { register } from "../dist/index.js";

export const TOKEN = "plugin-test-token-5d2a";

/** `cortex-mcp` as installed in the project's venv (CORTEX_MCP_BIN), else on PATH. */
function cortexCommand() {
  return process.env.CORTEX_MCP_BIN || "cortex-mcp";
}

export function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** A real server with its own database, no LLM and no embeddings (rules and raw turns). */
export async function startCortex() {
  const dir = mkdtempSync(join(tmpdir(), "cortex-plugin-"));
  const port = await freePort();
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([key]) => !key.startsWith("CORTEX_")),
  );
  Object.assign(env, {
    CORTEX_DB_PATH: join(dir, "brain.db"),
    CORTEX_API_TOKEN: TOKEN,
    CORTEX_EMBEDDING_PROVIDER: "none",
    CORTEX_LLM_PROVIDER: "none",
  });
  const child = spawn(cortexCommand(), ["serve", "--transport", "http", "--port", String(port)], {
    env,
    stdio: ["ignore", "ignore", "pipe"],
  });
  let log = "";
  child.stderr.on("data", (chunk) => {
    log += chunk;
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`cortex-mcp serve exited:\n${log}`);
    try {
      const reply = await fetch(`${url}/api/v1/health`, { signal: AbortSignal.timeout(1000) });
      if (reply.ok) break;
    } catch {
      // not up yet
    }
    if (Date.now() > deadline) throw new Error(`cortex-mcp serve did not answer:\n${log}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    url,
    async api(method, path, body) {
      const reply = await fetch(`${url}/api/v1${path}`, {
        method,
        headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const data = await reply.json();
      if (!reply.ok) throw new Error(`${method} ${path}: ${reply.status} ${JSON.stringify(data)}`);
      return data;
    },
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once("exit", resolve));
        child.kill("SIGTERM");
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The agent's memories once `predicate` holds for them (ingest extracts in the background). */
export async function memoriesWhen(cortex, agent, predicate, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { memories } = await cortex.api("GET", `/memories?agent_id=${agent}&limit=500`);
    if (predicate(memories) || Date.now() > deadline) return memories;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** A port where nothing listens (a stopped server). */
export async function stoppedServerUrl() {
  return `http://127.0.0.1:${await freePort()}`;
}

/** A server that accepts connections and never answers; counts the connections. */
export async function hangingServer() {
  const sockets = new Set();
  let connections = 0;
  const server = net.createServer((socket) => {
    connections += 1;
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => {});
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    get connections() {
      return connections;
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** What OpenClaw hands a plugin's register(): records hooks, tools, capability, CLI and logs. */
export function fakeHost(pluginConfig) {
  const host = {
    hooks: {},
    tools: [],
    capability: undefined,
    cli: [],
    logs: [],
  };
  const api = {
    id: "cortex",
    name: "Cortex memory",
    pluginConfig,
    logger: {
      info: (m) => host.logs.push(["info", m]),
      warn: (m) => host.logs.push(["warn", m]),
      error: (m) => host.logs.push(["error", m]),
      debug: (m) => host.logs.push(["debug", m]),
    },
    on(name, handler) {
      (host.hooks[name] ??= []).push(handler);
    },
    registerTool(factory, options) {
      host.tools.push({ factory, options });
    },
    registerMemoryCapability(capability) {
      host.capability = capability;
    },
    registerCli(registrar, options) {
      host.cli.push({ registrar, options });
    },
  };
  host.bridge = register(api);
  host.fire = async (name, event, ctx) => {
    const [handler] = host.hooks[name];
    return handler(event, ctx);
  };
  host.tool = (name, ctx = { agentId: "main" }) =>
    host.tools.find((t) => t.options.names.includes(name)).factory(ctx);
  return host;
}

export async function timed(work) {
  const started = performance.now();
  const value = await work();
  return { value, ms: performance.now() - started };
}
