// Run before `npm ci` / `npm install` and `npm run build`: OpenClaw (and so this plugin) needs
// Node >= 24.16. Say so in one line instead of npm's engine warning and a later `tsc: not found`.
// Plain CommonJS with nothing newer than Node 4 can parse, so that any old Node reaches this line.
var need = [24, 16];
var have = process.versions.node.split(".").map(Number);
if (have[0] < need[0] || (have[0] === need[0] && have[1] < need[1])) {
  console.error(
    "cortex OpenClaw plugin: needs Node " + need.join(".") + " or newer (OpenClaw's own" +
      " requirement), this is Node " + process.versions.node + ": install Node 24 (nvm install 24," +
      " or https://nodejs.org) and run the command again",
  );
  process.exit(1);
}
