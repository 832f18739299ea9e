// The TypeScript SDK v1 (@modelcontextprotocol/sdk, pinned by tests/interop/_node.py) over the
// HTTP+SSE transport of revision 2024-11-05, for `mcpwire probe` and `mcpwire fuzz`: the SDK's
// SSEServerTransport mounted as its documentation shows, on the SDK's createMcpExpressApp (its
// localhost protection on): GET /sse opens the stream (its first event names the POST endpoint),
// POST /messages?sessionId=... carries each message. Tools echo and add, a resource, a prompt.
// Run with NODE_PATH pointing at the pinned node_modules:  node ts_sse_server.cjs
// Prints {"url": ".../sse"} and stops at the end of stdin. Listens on 127.0.0.1 only.
"use strict";
const { McpServer } = require("@modelcontextprotocol/sdk/server/mcp.js");
const { SSEServerTransport } = require("@modelcontextprotocol/sdk/server/sse.js");
const { createMcpExpressApp } = require("@modelcontextprotocol/sdk/server/express.js");
const { z } = require("zod");

function build() {
  const server = new McpServer({ name: "ts-sdk-sse", version: "1.32.2" });
  server.registerTool("echo", { description: "Echoes its text", inputSchema: { text: z.string() } },
    async ({ text }) => ({ content: [{ type: "text", text }] }));
  server.registerTool("add", { description: "Adds two numbers", inputSchema: { a: z.number(), b: z.number() } },
    async ({ a, b }) => ({ content: [{ type: "text", text: String(a + b) }] }));
  server.registerResource("readme", "test://readme", { mimeType: "text/plain" },
    async (uri) => ({ contents: [{ uri: uri.href, mimeType: "text/plain", text: "read me" }] }));
  server.registerPrompt("greeting", { description: "A greeting", argsSchema: { name: z.string() } },
    async ({ name }) => ({ messages: [{ role: "user", content: { type: "text", text: `Hello, ${name}` } }] }));
  return server;
}

const app = createMcpExpressApp();
const transports = new Map();
app.get("/sse", async (req, res) => {
  const transport = new SSEServerTransport("/messages", res);
  transports.set(transport.sessionId, transport);
  res.on("close", () => transports.delete(transport.sessionId));
  await build().connect(transport);
});
app.post("/messages", async (req, res) => {
  const transport = transports.get(String(req.query.sessionId));
  if (!transport) {
    res.status(400).send("No transport found for sessionId");
    return;
  }
  await transport.handlePostMessage(req, res, req.body);  // createMcpExpressApp has parsed the JSON body
});
const listener = app.listen(0, "127.0.0.1", () => {
  process.stdout.write(JSON.stringify({ url: `http://127.0.0.1:${listener.address().port}/sse` }) + "\n");
});
process.stdin.on("end", () => process.exit(0));
process.stdin.resume();
