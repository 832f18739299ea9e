// The TypeScript SDK v2 (@modelcontextprotocol/server, pinned by tests/interop/_node.py) as an
// "everything" server for `mcpwire probe` and `mcpwire fuzz`: tools, resources and prompts,
// served the way the SDK documents for node:http: createMcpHandler (2026-07-28, with the
// stateless fallback for 2025-era traffic) behind its Host and Origin validation; or, with
// `stdio`, the same server over the SDK's serveStdio (its default: a 2026-07-28 opening, or an
// initialize-era one, pinned for the connection).
// Run with the pinned node_modules beside it (NODE_PATH does not apply to ES modules, so the
// test passes the folder as the first argument):  node ts2_server.mjs MODULES [stdio]
// Over HTTP it prints {"url": ...} and listens on 127.0.0.1 only. It stops at the end of stdin.
import http from "node:http";
import { createRequire } from "node:module";
import path from "node:path";

const require = createRequire(path.join(process.argv[2], "noop.js"));
const sdk = require("@modelcontextprotocol/server");
const { z } = require("zod");
const overStdio = process.argv[3] === "stdio";

function build() {
  const server = new sdk.McpServer({ name: overStdio ? "ts-sdk-v2-stdio" : "ts-sdk-v2-everything", version: "2.4.0" },
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
}

if (overStdio) {
  const { serveStdio } = require("@modelcontextprotocol/server/stdio");
  serveStdio(build);
} else {
  serveHttp();
}

function serveHttp() {
  const handler = sdk.createMcpHandler(build);

  async function serve(req, res) {
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    const headers = new Headers();
    for (let i = 0; i < req.rawHeaders.length; i += 2) headers.append(req.rawHeaders[i], req.rawHeaders[i + 1]);
    const hasBody = req.method !== "GET" && req.method !== "HEAD";
    const request = new Request(`http://${req.headers.host ?? "127.0.0.1"}${req.url}`,
      { method: req.method, headers, body: hasBody ? Buffer.concat(chunks) : undefined, duplex: "half" });
    const response = sdk.hostHeaderValidationResponse(request, sdk.localhostAllowedHostnames())
      ?? sdk.originValidationResponse(request, sdk.localhostAllowedOrigins())
      ?? await handler.fetch(request);
    res.statusCode = response.status;
    response.headers.forEach((value, key) => res.setHeader(key, value));
    if (response.body) {
      for await (const chunk of response.body) res.write(chunk);
    }
    res.end();
  }

  const httpServer = http.createServer((req, res) => {
    serve(req, res).catch((error) => { console.error(error); res.statusCode = 500; res.end(); });
  });
  httpServer.listen(0, "127.0.0.1", () => {
    process.stdout.write(JSON.stringify({ url: `http://127.0.0.1:${httpServer.address().port}/mcp` }) + "\n");
  });
  process.stdin.on("end", () => process.exit(0));
  process.stdin.resume();
}
