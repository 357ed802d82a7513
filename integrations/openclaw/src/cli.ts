/**
 * `openclaw cortex status` and `openclaw cortex search <query>`: is the server there, what does
 * it hold for this agent, and what would a recall bring back.
 */

import type { Bridge } from "./bridge.js";

/** The part of commander's `Command` this module uses. */
export interface CommandLike {
  command(spec: string): CommandLike;
  description(text: string): CommandLike;
  option(flags: string, description: string): CommandLike;
  action(handler: (...args: never[]) => unknown): CommandLike;
}

const CLI_TIMEOUT_MS = 10_000;

export function registerCortexCommands(
  program: CommandLike,
  bridge: Bridge,
  defaultAgent: string,
  print: (line: string) => void,
): void {
  const cortex = program
    .command("cortex")
    .description("Long-term memory in cortex-mcp: server status and search");
  cortex
    .command("status")
    .description("Check the cortex-mcp server and show what it holds for the agent")
    .option("--agent <id>", "cortex agent id (default: the plugin's)")
    .action((async (options: { agent?: string }) => {
      const agent = options.agent ?? defaultAgent;
      try {
        const health = await bridge.client.health(CLI_TIMEOUT_MS);
        print(`cortex-mcp ${health.version} at ${bridge.client.baseUrl}: ${health.status}`);
        print(summary(agent, await bridge.client.stats(agent, CLI_TIMEOUT_MS)));
      } catch (error) {
        print(`cortex: ${error instanceof Error ? error.message : String(error)}`);
        process.exitCode = 1;
      }
    }) as (...args: never[]) => unknown);
  cortex
    .command("search <query>")
    .description("Recall memories for a query, as the agent would get them")
    .option("--agent <id>", "cortex agent id (default: the plugin's)")
    .action((async (query: string, options: { agent?: string }) => {
      const agent = options.agent ?? defaultAgent;
      try {
        const result = await bridge.client.recall(
          {
            query,
            agent_id: agent,
            max_tokens: bridge.config.maxTokens,
            max_results: 10,
            timezone: bridge.config.timezone,
          },
          CLI_TIMEOUT_MS,
          "plain",
        );
        print(result.context || "No memories matched.");
      } catch (error) {
        print(`cortex: ${error instanceof Error ? error.message : String(error)}`);
        process.exitCode = 1;
      }
    }) as (...args: never[]) => unknown);
}

function summary(agent: string, stats: Record<string, unknown>): string {
  const memories = (stats.memories ?? {}) as { total?: number; by_layer?: Record<string, number> };
  const layers = Object.entries(memories.by_layer ?? {})
    .map(([layer, count]) => `${layer} ${count}`)
    .join(", ");
  const degraded = Array.isArray(stats.degraded) && stats.degraded.length ? stats.degraded : [];
  return (
    `agent ${agent}: ${memories.total ?? 0} memories (${layers || "none"})` +
    (degraded.length ? `; degraded: ${degraded.join("; ")}` : "")
  );
}
