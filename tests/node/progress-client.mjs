// Call one tool with the TypeScript SDK 1.x client the way a host with a short timeout does:
// a 10 s request timeout re-armed by each progress notification. Prints one JSON object: the
// reply (or the error), how many progress notifications came and the longest gap between them.
//
//   node progress-client.mjs <preflight-mcp> <project> <tool> [arguments as JSON]
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [command, project, tool, args = "{}"] = process.argv.slice(2);
const TIMEOUT_MS = 10_000;

const transport = new StdioClientTransport({ command, args: ["--project", project], env: { ...process.env }, stderr: "inherit" });
const client = new Client({ name: "short-timeout-host", version: "1.0.0" });
await client.connect(transport);
const report = { server: client.getServerVersion()?.name ?? null, progress: 0, longestGapMs: 0 };
const started = Date.now();
let last = started;
try {
  report.result = await client.callTool({ name: tool, arguments: JSON.parse(args) }, undefined, {
    timeout: TIMEOUT_MS,
    resetTimeoutOnProgress: true,
    onprogress: (p) => {
      const now = Date.now();
      report.longestGapMs = Math.max(report.longestGapMs, now - last);
      last = now;
      report.progress += 1;
      report.lastMessage = p.message ?? null;
    },
  });
} catch (error) {
  report.error = String(error?.message ?? error);
}
report.elapsedMs = Date.now() - started;
await client.close();
console.log(JSON.stringify(report));
