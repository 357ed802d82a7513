/**
 * The part of OpenClaw's plugin API (`openclaw/plugin-sdk/plugin-entry`, OpenClaw 2026.9.6) this
 * plugin uses, declared here so that building it needs no copy of OpenClaw: OpenClaw itself is
 * 670 MB of npm packages, and the plugin runs inside the OpenClaw that loads it. The e2e test
 * (tests/test_openclaw_e2e.py) loads the built plugin into a real OpenClaw.
 */

import type { AgentContext, Logger } from "./bridge.js";
import type { MemoryTool } from "./tools.js";

/** The events of the hooks the plugin registers: the fields it reads. */
export interface HookEvents {
  before_prompt_build: { prompt?: string; currentUserMessage?: string };
  agent_end: { messages?: unknown[]; success?: boolean };
  before_compaction: { messages?: unknown[]; sessionFile?: string };
  before_reset: { messages?: unknown[]; sessionFile?: string; reason?: string };
  session_end: { messages?: unknown[]; sessionFile?: string; reason?: string };
}

export interface CliDescriptor {
  name: string;
  description: string;
  hasSubcommands: boolean;
}

export interface PluginApi {
  pluginConfig?: unknown;
  logger: Logger;
  on<K extends keyof HookEvents>(
    hook: K,
    handler: (event: HookEvents[K], ctx: AgentContext) => unknown,
  ): void;
  registerTool(factory: (ctx: AgentContext) => MemoryTool, options: { names: string[] }): void;
  registerMemoryCapability(capability: {
    promptBuilder: (params: { availableTools: ReadonlySet<string> }) => string[];
  }): void;
  registerCli(
    registrar: (ctx: { program: unknown }) => void,
    options: { descriptors: CliDescriptor[] },
  ): void;
}

/** What OpenClaw reads from the entry module's default export. */
export interface PluginEntry {
  id: string;
  name: string;
  description: string;
  kind: "memory";
  register(api: PluginApi): void;
}
