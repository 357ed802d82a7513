// The command, arguments and environment an MCPB host (Claude Desktop) starts an unpacked bundle
// with: the mcpb library's own getMcpConfigForManifest, given the folder the bundle was unpacked
// into, the user's home and what the user typed into the bundle's settings form.
//
//   node host-config.mjs <unpacked folder> <home> '<user_config as JSON>'
//
// prints {"command": ..., "args": [...], "env": {...}} on stdout (tests/test_bundle.py runs it).
import { readFileSync } from "node:fs";
import { join, sep } from "node:path";
import { getMcpConfigForManifest } from "@anthropic-ai/mcpb";

const [folder, home, userConfig = "{}"] = process.argv.slice(2);
if (!folder || !home) {
  console.error("usage: node host-config.mjs <unpacked folder> <home> '<user_config JSON>'");
  process.exit(2);
}
const manifest = JSON.parse(readFileSync(join(folder, "manifest.json"), "utf8"));
const config = await getMcpConfigForManifest({
  manifest,
  extensionPath: folder,
  systemDirs: { HOME: home, DESKTOP: join(home, "Desktop"), DOCUMENTS: join(home, "Documents") },
  userConfig: JSON.parse(userConfig),
  pathSeparator: sep,
});
if (config === undefined) {
  console.error("the host would not start this bundle (a required setting is missing)");
  process.exit(1);
}
process.stdout.write(JSON.stringify(config));
