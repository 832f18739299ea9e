// The TypeScript SDK v1 (@modelcontextprotocol/sdk, pinned by tests/interop) as a server for
// mcpwire's client: the same features as our_server.py. Run with NODE_PATH pointing at the
// pinned node_modules:  node ts_server.cjs http|stdio
// HTTP: one McpServer per session (the SDK's stateful pattern), prints {"url": ...}, stops at
// the end of stdin. The elicitation and sampling requests are sent without relatedRequestId,
// so the SDK puts them on the session's GET stream (as its conformance server does).
"use strict";
const http = require("node:http");
const { randomUUID } = require("node:crypto");
const { McpServer } = require("@modelcontextprotocol/sdk/server/mcp.js");
const { completable } = require("@modelcontextprotocol/sdk/server/completable.js");
const { StreamableHTTPServerTransport } = require("@modelcontextprotocol/sdk/server/streamableHttp.js");
const { StdioServerTransport } = require("@modelcontextprotocol/sdk/server/stdio.js");
const { SubscribeRequestSchema, UnsubscribeRequestSchema } = require("@modelcontextprotocol/sdk/types.js");
const { InMemoryTaskStore } = require("@modelcontextprotocol/sdk/experimental/tasks/stores/in-memory.js");
const { z } = require("zod");

const NAMES = ["Ada", "Alan", "Grace"];

function build() {
  const server = new McpServer(
    { name: "ts-sdk-interop", version: "1.32.2" },
    { capabilities: { logging: {}, resources: { subscribe: true },
      tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } }, taskStore: new InMemoryTaskStore() },
  );
  const subscribed = new Set();
  server.server.setRequestHandler(SubscribeRequestSchema, async (req) => { subscribed.add(req.params.uri); return {}; });
  server.server.setRequestHandler(UnsubscribeRequestSchema, async (req) => { subscribed.delete(req.params.uri); return {}; });

  server.registerTool("echo", { description: "Echo the text back", inputSchema: { text: z.string() } },
    async ({ text }) => ({ content: [{ type: "text", text }] }));

  server.registerTool("count", { description: "Report progress 1..3" }, async (extra) => {
    const token = extra._meta && extra._meta.progressToken;
    for (const step of [1, 2, 3]) {
      if (token !== undefined) {
        await extra.sendNotification({ method: "notifications/progress",
          params: { progressToken: token, progress: step, total: 3, message: `step ${step}` } });
      }
    }
    return { content: [{ type: "text", text: "counted" }] };
  });

  server.registerTool("chatty", { description: "Log a debug and a warning message" }, async (extra) => {
    await server.sendLoggingMessage({ level: "debug", data: "quiet detail" }, extra.sessionId);
    await server.sendLoggingMessage({ level: "warning", data: "loud news" }, extra.sessionId);
    return { content: [{ type: "text", text: "logged" }] };
  });

  server.registerTool("greet", { description: "Ask the client for a name" }, async () => {
    const answer = await server.server.elicitInput({ message: "Your name?", requestedSchema: {
      type: "object", properties: { name: { type: "string" } }, required: ["name"] } });
    const text = answer.action === "accept" ? `Hello, ${answer.content.name}!` : `no name (${answer.action})`;
    return { content: [{ type: "text", text }] };
  });

  server.registerTool("ask_llm", { description: "Ask the client's model" }, async () => {
    const answer = await server.server.createMessage({
      messages: [{ role: "user", content: { type: "text", text: "Capital of France?" } }], maxTokens: 50 });
    return { content: [{ type: "text", text: `The model said: ${answer.content.text}` }] };
  });

  // 2025-11-25 tasks (the SDK's experimental API): the work finishes 200 ms after the task is made.
  server.experimental.tasks.registerToolTask("slow_task",
    { description: "A task that completes shortly", execution: { taskSupport: "required" } }, {
      createTask: async (extra) => {
        const task = await extra.taskStore.createTask({ ttl: 60000, pollInterval: 100 });
        setTimeout(() => {
          extra.taskStore.storeTaskResult(task.taskId, "completed",
            { content: [{ type: "text", text: "ts task done" }] }).catch(() => {});
        }, 200);
        return { task };
      },
      getTask: async (extra) => extra.taskStore.getTask(extra.taskId),
      getTaskResult: async (extra) => extra.taskStore.getTaskResult(extra.taskId),
    });

  server.registerResource("note", "test://note", { mimeType: "text/plain", description: "A note" },
    async (uri) => ({ contents: [{ uri: uri.href, mimeType: "text/plain", text: "a note" }] }));

  // Answers with the URIs subscribed at the time, so a client can see its subscribe and unsubscribe.
  server.registerTool("touch", { description: "Announce that test://note was updated" }, async () => {
    if (subscribed.has("test://note")) await server.server.sendResourceUpdated({ uri: "test://note" });
    return { content: [{ type: "text", text: `touched; subscribed: ${[...subscribed].sort().join(",") || "none"}` }] };
  });

  server.registerPrompt("greeting", { description: "Greets someone",
    argsSchema: { name: completable(z.string(), (value) => NAMES.filter((n) => n.startsWith(value))) } },
    ({ name }) => ({ messages: [{ role: "user", content: { type: "text", text: `Say hello to ${name}` } }] }));
  return server;
}

async function serveHttp() {
  const transports = new Map();
  const httpServer = http.createServer(async (req, res) => {
    const sid = req.headers["mcp-session-id"];
    let transport = sid ? transports.get(sid) : undefined;
    if (!transport && req.method === "POST" && !sid) {
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => transports.set(id, transport),
      });
      transport.onclose = () => { if (transport.sessionId) transports.delete(transport.sessionId); };
      await build().connect(transport);
    }
    if (!transport) {
      res.writeHead(sid ? 404 : 400, { "content-type": "application/json" });
      res.end(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32000, message: "No valid session" } }));
      return;
    }
    await transport.handleRequest(req, res);
  });
  httpServer.listen(0, "127.0.0.1", () => {
    process.stdout.write(JSON.stringify({ url: `http://127.0.0.1:${httpServer.address().port}/mcp` }) + "\n");
  });
  process.stdin.on("end", () => process.exit(0));
  process.stdin.resume();
}

async function serveStdio() {
  await build().connect(new StdioServerTransport());
}

(process.argv[2] === "stdio" ? serveStdio() : serveHttp()).catch((err) => { console.error(err); process.exit(1); });
