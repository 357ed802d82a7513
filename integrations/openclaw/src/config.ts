/**
 * The plugin's settings (`plugins.entries.cortex.config` in openclaw.json), checked against the
 * same rules as the manifest's configSchema, with defaults filled in.
 */

export interface CortexConfig {
  /** Where `cortex-mcp serve` answers (its REST API is under /api/v1). */
  baseUrl: string;
  /** Bearer token (CORTEX_API_TOKEN of the server); from the environment when not set here. */
  apiToken?: string;
  /** The cortex agent id memories are kept under; OpenClaw's agent id when not set. */
  agentId?: string;
  autoRecall: boolean;
  autoCapture: boolean;
  /** Token budget of the memory block pasted before a prompt. */
  maxTokens: number;
  /** How long a recall may hold a turn up before it is skipped. */
  recallTimeoutMs: number;
  /** How long a capture or flush may run (they never hold a reply up). */
  captureTimeoutMs: number;
  /** Recent messages kept per session for the flush before compaction or reset. */
  bufferMessages: number;
  /** The user's IANA time zone ("Asia/Tokyo"), sent with every call so that "yesterday" and
   * dates are the user's; this machine's zone when not set. */
  timezone: string;
}

export const DEFAULTS = {
  baseUrl: "http://127.0.0.1:21100",
  autoRecall: true,
  autoCapture: true,
  maxTokens: 2000,
  recallTimeoutMs: 3000,
  captureTimeoutMs: 5000,
  bufferMessages: 40,
} as const;

/** Limits shared with openclaw.plugin.json's configSchema (a test checks they agree). */
export const LIMITS = {
  maxTokens: [50, 100_000],
  recallTimeoutMs: [100, 60_000],
  captureTimeoutMs: [100, 120_000],
  bufferMessages: [2, 2000],
} as const;

const KEYS = new Set([
  "baseUrl",
  "apiToken",
  "agentId",
  "autoRecall",
  "autoCapture",
  "maxTokens",
  "recallTimeoutMs",
  "captureTimeoutMs",
  "bufferMessages",
  "timezone",
]);

export class ConfigError extends Error {
  override name = "ConfigError";
}

export function resolveConfig(
  raw: unknown,
  env: Record<string, string | undefined> = process.env,
): CortexConfig {
  const given = raw ?? {};
  if (typeof given !== "object" || Array.isArray(given)) {
    throw new ConfigError("cortex plugin config: must be an object");
  }
  const values = given as Record<string, unknown>;
  for (const key of Object.keys(values)) {
    if (!KEYS.has(key)) {
      throw new ConfigError(
        `cortex plugin config: unknown setting "${key}" (known: ${[...KEYS].join(", ")})`,
      );
    }
  }
  return {
    baseUrl: url(values.baseUrl),
    apiToken: optionalText("apiToken", values.apiToken) ?? nonEmpty(env.CORTEX_API_TOKEN),
    agentId: optionalText("agentId", values.agentId, 128),
    autoRecall: flag("autoRecall", values.autoRecall, DEFAULTS.autoRecall),
    autoCapture: flag("autoCapture", values.autoCapture, DEFAULTS.autoCapture),
    maxTokens: integer("maxTokens", values.maxTokens, DEFAULTS.maxTokens),
    recallTimeoutMs: integer("recallTimeoutMs", values.recallTimeoutMs, DEFAULTS.recallTimeoutMs),
    captureTimeoutMs: integer(
      "captureTimeoutMs",
      values.captureTimeoutMs,
      DEFAULTS.captureTimeoutMs,
    ),
    bufferMessages: integer("bufferMessages", values.bufferMessages, DEFAULTS.bufferMessages),
    timezone: zone(values.timezone),
  };
}

/** The zone given, else this machine's (what the user's clock shows here). */
function zone(value: unknown): string {
  if (value === undefined) return Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
  const name = typeof value === "string" ? value.trim() : "";
  let known = false;
  try {
    known = name.length > 0 && name.length <= 64 && !!new Intl.DateTimeFormat("en", { timeZone: name });
  } catch {
    known = false; // RangeError: not a zone Intl knows
  }
  if (!known) {
    throw new ConfigError(
      'cortex plugin config: timezone must be an IANA time zone name such as "Asia/Tokyo"',
    );
  }
  return name;
}

function url(value: unknown): string {
  if (value === undefined) return DEFAULTS.baseUrl;
  if (typeof value !== "string" || !/^https?:\/\/[^\s/]+/.test(value)) {
    throw new ConfigError(
      'cortex plugin config: baseUrl must be an http(s) URL such as "http://127.0.0.1:21100"',
    );
  }
  return value.replace(/\/+$/, "").replace(/\/api\/v1$/, "");
}

function optionalText(name: string, value: unknown, limit = 4096): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "string" || !value.trim() || value.length > limit) {
    throw new ConfigError(`cortex plugin config: ${name} must be 1 to ${limit} characters of text`);
  }
  return value.trim();
}

function nonEmpty(value: string | undefined): string | undefined {
  return value && value.trim() ? value.trim() : undefined;
}

function flag(name: string, value: unknown, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== "boolean") {
    throw new ConfigError(`cortex plugin config: ${name} must be true or false`);
  }
  return value;
}

function integer(name: keyof typeof LIMITS, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  const [low, high] = LIMITS[name];
  if (typeof value !== "number" || !Number.isInteger(value) || value < low || value > high) {
    throw new ConfigError(
      `cortex plugin config: ${name} must be a whole number from ${low} to ${high}`,
    );
  }
  return value;
}
