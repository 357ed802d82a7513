/**
 * What each hook does. Nothing here may break or hold up an agent's turn: every call to cortex
 * has a deadline, errors are logged once per kind and swallowed, and a hook returns nothing
 * (the turn goes on without memories) whenever cortex cannot answer in time.
 */

import { open } from "node:fs/promises";

import {
  CortexClient,
  CortexUnavailable,
  MIN_SERVER_VERSION,
  missingFeatures,
  type TextMessage,
  versionAtLeast,
} from "./client.js";
import type { CortexConfig } from "./config.js";
import {
  conversationText,
  framedMemories,
  lastExchange,
  SessionBuffers,
  withoutInjectedMemories,
} from "./messages.js";

/** The server refuses longer queries; the start of a long message says what it is about. */
export const MAX_QUERY_CHARS = 2000;
const SKIPPED_TRIGGERS = new Set(["heartbeat", "cron", "memory"]);
const HEALTH_TIMEOUT_MS = 1500;
const SESSION_FILE_TAIL_BYTES = 2_000_000;

export interface Logger {
  info(message: string): void;
  warn(message: string): void;
  debug?(message: string): void;
}

export interface AgentContext {
  agentId?: string;
  sessionKey?: string;
  sessionId?: string;
  trigger?: string;
}

export class Bridge {
  readonly client: CortexClient;
  readonly buffers: SessionBuffers;
  private health: Promise<void> | undefined;
  private readonly warned = new Set<string>();

  constructor(
    readonly config: CortexConfig,
    private readonly logger: Logger,
    client?: CortexClient,
  ) {
    this.client = client ?? new CortexClient(config);
    this.buffers = new SessionBuffers(config.bufferMessages);
  }

  agentFor(ctx: { agentId?: string }): string {
    return this.config.agentId ?? ctx.agentId ?? "main";
  }

  // ---- before_prompt_build --------------------------------------------------------------

  /** Memories for the prompt as `prependContext`, or nothing; never longer than the timeout. */
  async recallForPrompt(
    event: { prompt?: string; currentUserMessage?: string },
    ctx: AgentContext,
  ): Promise<{ prependContext: string } | undefined> {
    if (!this.config.autoRecall || SKIPPED_TRIGGERS.has(ctx.trigger ?? "")) return undefined;
    const query = queryFrom(event.currentUserMessage ?? event.prompt ?? "");
    if (!query) return undefined;
    const started = performance.now();
    const result = await withDeadline(this.config.recallTimeoutMs, async (budgetMs) => {
      await this.checkServerOnce();
      return this.client.recall(
        {
          query,
          agent_id: this.agentFor(ctx),
          max_tokens: this.config.maxTokens,
          // the user's zone and clock: "yesterday" is their yesterday
          timezone: this.config.timezone,
          now: new Date().toISOString(),
        },
        budgetMs(),
      );
    }).catch((error: unknown) => this.report("recall", error));
    const elapsed = performance.now() - started;
    if (!result?.context) return undefined;
    this.logger.info(
      `cortex: recalled ${result.memories.length} memories in ${elapsed.toFixed(0)} ms`,
    );
    return { prependContext: framedMemories(result.context) };
  }

  // ---- agent_end ------------------------------------------------------------------------

  /** Stores the turn's last exchange (text only) and keeps it for the session's next flush.
   * Resolves when cortex has it or the capture timeout has passed; never rejects. */
  async captureTurn(
    event: { messages?: unknown[]; success?: boolean },
    ctx: AgentContext,
  ): Promise<void> {
    if (!this.config.autoCapture || SKIPPED_TRIGGERS.has(ctx.trigger ?? "")) return;
    if (event.success === false || !Array.isArray(event.messages)) return;
    const exchange = lastExchange(event.messages);
    if (!exchange.some((m) => m.role === "user")) return;
    const session = sessionOf(ctx);
    if (session) this.buffers.add(session, exchange);
    await withDeadline(this.config.captureTimeoutMs, (budgetMs) =>
      this.client.ingest(
        {
          messages: exchange,
          agent_id: this.agentFor(ctx),
          session_id: session,
          timezone: this.config.timezone,
        },
        budgetMs(),
      ),
    ).catch((error: unknown) => this.report("capture", error));
  }

  // ---- before_compaction, before_reset, session_end -------------------------------------

  /** Sends the session's buffered messages (or, when this process has none, the ones the event
   * or the session file holds) to /flush before they leave the context. */
  async flushSession(
    reason: string,
    event: { messages?: unknown[]; sessionFile?: string },
    ctx: AgentContext,
  ): Promise<void> {
    const session = sessionOf(ctx);
    const buffered = session ? this.buffers.peek(session) : [];
    let messages = buffered;
    let source = "this process's buffer";
    if (!messages.length && Array.isArray(event.messages)) {
      messages = conversationText(event.messages).slice(-this.config.bufferMessages);
      source = "the event";
    }
    if (!messages.length && event.sessionFile) {
      messages = await sessionFileMessages(event.sessionFile, this.config.bufferMessages).catch(
        () => [],
      );
      source = "the session file";
    }
    if (!messages.length) return;
    const sent = await withDeadline(this.config.captureTimeoutMs, (budgetMs) =>
      this.client.flush(
        {
          messages,
          agent_id: this.agentFor(ctx),
          session_id: session,
          reason,
          timezone: this.config.timezone,
        },
        budgetMs(),
      ),
    ).catch((error: unknown) => this.report(`flush (${reason})`, error));
    if (!sent) return;
    if (session) this.buffers.drop(session, buffered.length);
    this.logger.info(
      `cortex: flushed ${messages.length} messages from ${source} (${reason}) for ${session ?? "?"}`,
    );
  }

  // ---- the server -----------------------------------------------------------------------

  /** One health check per process: says clearly when cortex is missing or too old. */
  checkServerOnce(): Promise<void> {
    this.health ??= this.client.health(HEALTH_TIMEOUT_MS).then(
      (health) => {
        if (!versionAtLeast(health.version ?? "0", MIN_SERVER_VERSION)) {
          this.logger.warn(
            `cortex: cortex-mcp ${health.version} at ${this.config.baseUrl} is older than ` +
              `${MIN_SERVER_VERSION}, which this plugin needs; update the server`,
          );
        } else {
          this.logger.info(
            `cortex: connected to cortex-mcp ${health.version} at ${this.config.baseUrl}`,
          );
        }
        void this.checkFeatures(health.version);
      },
      (error: unknown) => {
        this.health = undefined; // asked again on a later turn
        throw error;
      },
    );
    return this.health;
  }

  /** In the background (a turn never waits for it): does the server take what we send? */
  private async checkFeatures(version: string): Promise<void> {
    try {
      const missing = missingFeatures(await this.client.openapi(HEALTH_TIMEOUT_MS * 2));
      if (missing.length) {
        this.logger.warn(
          `cortex: cortex-mcp ${version} at ${this.config.baseUrl} is too old for this plugin ` +
            `(its REST API lacks ${missing.join(", ")}): update the server`,
        );
      }
    } catch (error) {
      this.report("compatibility check", error);
    }
  }

  private report(what: string, error: unknown): undefined {
    const message = error instanceof Error ? error.message : String(error);
    const key = `${what}:${error instanceof CortexUnavailable ? "unavailable" : message}`;
    if (this.warned.has(key)) {
      this.logger.debug?.(`cortex: ${what} skipped: ${message}`);
    } else {
      this.warned.add(key);
      this.logger.warn(`cortex: ${what} skipped: ${message}`);
    }
    return undefined;
  }
}

function queryFrom(message: string): string {
  const text = withoutInjectedMemories(message);
  return text.length <= MAX_QUERY_CHARS ? text : text.slice(0, MAX_QUERY_CHARS);
}

function sessionOf(ctx: AgentContext): string | undefined {
  const key = ctx.sessionKey ?? ctx.sessionId;
  return key ? key.slice(0, 128) : undefined;
}

/** Runs `work` with a deadline it can read (`budgetMs()` is what is left) and gives up at it,
 * whatever `work` does (a hanging socket included). */
async function withDeadline<T>(
  timeoutMs: number,
  work: (budgetMs: () => number) => Promise<T>,
): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  const left = () => Math.max(1, Math.floor(deadline - performance.now()));
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new CortexUnavailable(`no answer within ${timeoutMs} ms`)),
      timeoutMs,
    );
  });
  try {
    return await Promise.race([work(left), late]);
  } finally {
    clearTimeout(timer);
  }
}

/** The last messages of an OpenClaw session transcript (JSONL, one entry per line). */
async function sessionFileMessages(path: string, limit: number): Promise<TextMessage[]> {
  const file = await open(path, "r");
  try {
    const { size } = await file.stat();
    const start = Math.max(0, size - SESSION_FILE_TAIL_BYTES);
    const buffer = Buffer.alloc(size - start);
    await file.read(buffer, 0, buffer.length, start);
    const lines = buffer
      .toString("utf8")
      .split("\n")
      .slice(start > 0 ? 1 : 0);
    const messages: unknown[] = [];
    for (const line of lines) {
      if (!line.trim()) continue;
      try {
        const entry = JSON.parse(line) as { type?: string; message?: unknown };
        if (entry.type === "message" && entry.message) messages.push(entry.message);
      } catch {
        // a line cut by a concurrent write: skip it
      }
    }
    return conversationText(messages).slice(-limit);
  } finally {
    await file.close();
  }
}
