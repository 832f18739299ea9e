// The TypeScript SDK v2 (@modelcontextprotocol/server, pinned by tests/interop/_node.py) over
// stdio, for `mcpwire probe` and `mcpwire fuzz`: the SDK's serveStdio (its default: a 2026-07-28
// opening, or an initialize-era one, pinned for the connection), the same tools, resource and
// prompt as ts2_server.mjs. Run with the pinned node_modules beside it (NODE_PATH does not apply
// to ES modules, so the folder is the first argument):  node ts2_stdio_server.mjs MODULES
// It stops at the end of its stdin.
import { createRequire } from "node:module";
import path from "node:path";

const require = createRequire(path.join(process.argv[2], "noop.js"));
const sdk = require("@modelcontextprotocol/server");
const { serveStdio } = require("@modelcontextprotocol/server/stdio");
const { z } = require("zod");

serveStdio(() => {
  const server = new sdk.McpServer({ name: "ts-sdk-v2-stdio", version: "2.4.0" },
    { capabilities: { tools: {}, resources: {}, prompts: {} } });
  server.registerTool("echo", { description: "Echoes its text", inputSchema: z.object({ text: z.string() }) },
    async ({ text }) => ({ content: [{ type: "text", text }] }));
  server.registerTool("add", { description: "Adds two numbers", inputSchema: z.object({ a: z.number(), b: z.number() }) },
    async ({ a, b }) => ({ content: [{ type: "text", text: String(a + b) }] }));
  server.registerTool("simple_text", { description: "Answers a fixed text" },
    async () => ({ content: [{ type: "text", text: "simple" }] }));
  server.registerResource("readme", "test://readme", { mimeType: "text/plain" },
    async (uri) => ({ contents: [{ uri: uri.href, mimeType: "text/plain", text: "read me" }] }));
  server.registerPrompt("greeting", { description: "A greeting", argsSchema: { name: z.string() } },
    async ({ name }) => ({ messages: [{ role: "user", content: { type: "text", text: `Hello, ${name}` } }] }));
  return server;
});
