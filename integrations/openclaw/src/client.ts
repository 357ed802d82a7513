/**
 * A small client of cortex-mcp's REST API: every call has a deadline, and a circuit breaker
 * stops calling a server that keeps failing (3 failures in a row open it for 5 s, doubling on
 * each failed probe up to 5 minutes), so a server that is down costs a turn nothing.
 */

import type { CortexConfig } from "./config.js";

/** The oldest server whose REST API takes what this plugin sends (block content, `messages`
 * turns, recall `format: "prompt"`). */
export const MIN_SERVER_VERSION = "0.1.0";

export class CortexUnavailable extends Error {
  override name = "CortexUnavailable";
}

export interface RecallResult {
  context: string;
  memories: Array<{ id: string; content: string; score?: number; [key: string]: unknown }>;
  meta: { took_ms: number; skipped_reason?: string | null; [key: string]: unknown };
}

export interface TextMessage {
  role: string;
  content: string;
  /** When it was said, as OpenClaw's message has it (epoch ms): the memories' own time. */
  timestamp?: number | string;
}

export interface OpenApiDocument {
  components?: { schemas?: Record<string, { properties?: Record<string, unknown> }> };
}

/** What this plugin needs of the server's REST API that older servers lack, or nothing. */
export function missingFeatures(doc: OpenApiDocument): string[] {
  const schemas = doc.components?.schemas ?? {};
  const needs: Array<[string, string]> = [
    ["RecallBody", "format"],
    ["IngestBody", "messages"],
    ["RecallBody", "timezone"],
  ];
  return needs
    .filter(([schema, field]) => !schemas[schema]?.properties?.[field])
    .map(([schema, field]) => `${schema.replace("Body", "").toLowerCase()} ${field}`);
}

export class Breaker {
  private failures = 0;
  private openUntil = 0;
  private cooldownMs: number;

  constructor(
    private readonly threshold = 3,
    private readonly firstCooldownMs = 5_000,
    private readonly maxCooldownMs = 300_000,
    private readonly now: () => number = Date.now,
  ) {
    this.cooldownMs = firstCooldownMs;
  }

  /** False while open; once the cooldown is over one call may probe the server. */
  allows(): boolean {
    return this.now() >= this.openUntil;
  }

  get isOpen(): boolean {
    return !this.allows();
  }

  succeeded(): void {
    this.failures = 0;
    this.openUntil = 0;
    this.cooldownMs = this.firstCooldownMs;
  }

  failed(): void {
    this.failures += 1;
    if (this.failures < this.threshold) return;
    this.openUntil = this.now() + this.cooldownMs;
    this.cooldownMs = Math.min(this.cooldownMs * 2, this.maxCooldownMs);
  }
}

export class CortexClient {
  readonly breaker: Breaker;

  constructor(
    private readonly config: CortexConfig,
    breaker?: Breaker,
  ) {
    this.breaker = breaker ?? new Breaker();
  }

  get baseUrl(): string {
    return this.config.baseUrl;
  }

  async health(timeoutMs: number): Promise<{ status: string; version: string }> {
    return (await this.call("GET", "/health", undefined, timeoutMs)) as {
      status: string;
      version: string;
    };
  }

  async openapi(timeoutMs: number): Promise<OpenApiDocument> {
    return (await this.call("GET", "/openapi.json", undefined, timeoutMs)) as OpenApiDocument;
  }

  async recall(
    body: {
      query: string;
      agent_id: string;
      max_tokens: number;
      max_results?: number;
      timezone?: string;
      now?: string;
    },
    timeoutMs: number,
    format: "prompt" | "plain" = "prompt",
  ): Promise<RecallResult> {
    return (await this.call("POST", "/recall", { ...body, format }, timeoutMs)) as RecallResult;
  }

  async ingest(
    body: { messages: TextMessage[]; agent_id: string; session_id?: string; timezone?: string },
    timeoutMs: number,
  ): Promise<{ turn_id: string; status: string }> {
    return (await this.call("POST", "/ingest", body, timeoutMs)) as {
      turn_id: string;
      status: string;
    };
  }

  async flush(
    body: {
      messages: TextMessage[];
      agent_id: string;
      session_id?: string;
      reason: string;
      timezone?: string;
    },
    timeoutMs: number,
  ): Promise<{ flushed: unknown[]; degraded: string[] }> {
    return (await this.call("POST", "/flush", body, timeoutMs)) as {
      flushed: unknown[];
      degraded: string[];
    };
  }

  async memory(id: string, agentId: string, timeoutMs: number): Promise<Record<string, unknown>> {
    const path = `/memories/${encodeURIComponent(id)}?agent_id=${encodeURIComponent(agentId)}`;
    return (await this.call("GET", path, undefined, timeoutMs)) as Record<string, unknown>;
  }

  async stats(agentId: string, timeoutMs: number): Promise<Record<string, unknown>> {
    const path = `/stats?agent_id=${encodeURIComponent(agentId)}`;
    return (await this.call("GET", path, undefined, timeoutMs)) as Record<string, unknown>;
  }

  /** One request within `timeoutMs`; a network failure, a timeout or a 5xx counts against the
   * breaker, a 4xx (our request was refused) does not. */
  private async call(
    method: string,
    path: string,
    body: unknown,
    timeoutMs: number,
  ): Promise<unknown> {
    if (!this.breaker.allows()) {
      throw new CortexUnavailable(
        `cortex-mcp at ${this.config.baseUrl} failed repeatedly; calls pause for a while`,
      );
    }
    const headers: Record<string, string> = { accept: "application/json" };
    if (body !== undefined) headers["content-type"] = "application/json";
    if (this.config.apiToken) headers.authorization = `Bearer ${this.config.apiToken}`;
    let response: Response;
    try {
      response = await fetch(`${this.config.baseUrl}/api/v1${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (error) {
      this.breaker.failed();
      throw new CortexUnavailable(describeNetworkError(this.config.baseUrl, error, timeoutMs));
    }
    const text = await readBody(response, timeoutMs).catch(() => "");
    if (response.status >= 500) {
      this.breaker.failed();
      throw new CortexUnavailable(`cortex-mcp answered ${response.status}: ${errorText(text)}`);
    }
    this.breaker.succeeded();
    if (response.status === 401) {
      throw new Error(
        `cortex-mcp at ${this.config.baseUrl} refused the token: set the plugin's apiToken ` +
          "(or CORTEX_API_TOKEN) to the server's CORTEX_API_TOKEN",
      );
    }
    if (!response.ok) {
      throw new Error(`cortex-mcp refused ${method} ${path.split("?")[0]}: ${errorText(text)}`);
    }
    return text ? JSON.parse(text) : {};
  }
}

async function readBody(response: Response, timeoutMs: number): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error("body timed out")), timeoutMs);
  });
  try {
    return await Promise.race([response.text(), late]);
  } finally {
    clearTimeout(timer);
  }
}

function errorText(text: string): string {
  try {
    const parsed = JSON.parse(text) as { error?: { message?: string } };
    return parsed.error?.message ?? text.slice(0, 300);
  } catch {
    return text.slice(0, 300) || "(no body)";
  }
}

function describeNetworkError(baseUrl: string, error: unknown, timeoutMs: number): string {
  const name = (error as { name?: string })?.name;
  if (name === "TimeoutError" || name === "AbortError") {
    return `cortex-mcp at ${baseUrl} did not answer within ${timeoutMs} ms`;
  }
  const cause = (error as { cause?: { code?: string } })?.cause?.code;
  if (cause === "ECONNREFUSED") {
    return `cortex-mcp is not running at ${baseUrl} (start it with: cortex-mcp serve)`;
  }
  return `cortex-mcp at ${baseUrl} is unreachable: ${cause ?? String(error)}`;
}

/** Compares dotted versions numerically ("0.10.0" > "0.9.1"); pre-release tails are ignored. */
export function versionAtLeast(version: string, minimum: string): boolean {
  const parts = (v: string) =>
    v
      .split(/[.+-]/)
      .slice(0, 3)
      .map((p) => Number.parseInt(p, 10) || 0);
  const [a, b] = [parts(version), parts(minimum)];
  for (let i = 0; i < 3; i += 1) {
    if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) > (b[i] ?? 0);
  }
  return true;
}
