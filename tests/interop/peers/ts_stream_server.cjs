// The TypeScript SDK v1 (@modelcontextprotocol/sdk, pinned by tests/interop/_node.py) as a server
// that talks to its client outside any request, on the session's GET stream: what an initialize-era
// client hears only if it opens that stream. Run with NODE_PATH pointing at the pinned node_modules:
//   node ts_stream_server.cjs
// One McpServer per session (the SDK's stateful pattern) with an event store, so the GET stream's
// events carry ids and a GET with Last-Event-ID replays what the client missed. Prints
// {"url": ...}, listens on 127.0.0.1 only, stops at the end of stdin.
// Every message below is sent without relatedRequestId: the SDK puts such messages on the
// session's GET stream, and drops them when none is open.
"use strict";
const http = require("node:http");
const { randomUUID } = require("node:crypto");
const { McpServer } = require("@modelcontextprotocol/sdk/server/mcp.js");
const { StreamableHTTPServerTransport } = require("@modelcontextprotocol/sdk/server/streamableHttp.js");
const { z } = require("zod");

// The SDK's example store cannot replay its GET stream (the stream's id "_GET_stream" breaks its
// id format), so this one keeps, per stream, its events in order; ids are unique per process.
class EventStore {
  constructor() { this.next = 0; this.events = []; }
  async storeEvent(streamId, message) {
    const eventId = `e${++this.next}`;
    this.events.push({ eventId, streamId, message });
    return eventId;
  }
  async replayEventsAfter(lastEventId, { send }) {
    const at = this.events.findIndex((e) => e.eventId === lastEventId);
    if (at < 0) return "";
    const { streamId } = this.events[at];
    for (const e of this.events.slice(at + 1)) {
      if (e.streamId === streamId) await send(e.eventId, e.message);
    }
    return streamId;
  }
}

function build(getTransport) {
  const server = new McpServer({ name: "ts-sdk-stream", version: "1.32.2" }, { capabilities: { logging: {} } });
  const log = (data, sessionId) => server.sendLoggingMessage({ level: "info", logger: "peer", data }, sessionId);

  server.registerTool("log", { description: "Logs a line on the session's GET stream, then answers" },
    async (extra) => {
      await log("a line on the GET stream", extra.sessionId);
      return { content: [{ type: "text", text: "logged" }] };
    });

  server.registerTool("later", { description: "Answers, then logs a line and announces a tools list change" },
    async (extra) => {
      setTimeout(() => {
        log("a line after the call", extra.sessionId).then(() => server.sendToolListChanged()).catch(() => {});
      }, 100);
      return { content: [{ type: "text", text: "scheduled" }] };
    });

  // The progress goes on the GET stream, then a ping: once the client answered it (a POST), it
  // has read what came before it on that stream, so the progress reaches the call before its answer.
  server.registerTool("progress", { description: "Reports its progress on the GET stream" }, async (extra) => {
    const token = extra._meta && extra._meta.progressToken;
    if (token !== undefined) {
      await server.server.notification({ method: "notifications/progress",
        params: { progressToken: token, progress: 1, total: 2, message: "half way" } });
    }
    await server.server.ping();
    return { content: [{ type: "text", text: "reported" }] };
  });

  // Closes the GET stream, then logs while the client is away: only a GET with the stream's
  // Last-Event-ID brings that line back (from the event store).
  server.registerTool("drop", { description: "Closes the GET stream and logs while it is closed" },
    async (extra) => {
      await log("before the drop", extra.sessionId);
      setTimeout(() => {
        getTransport().closeStandaloneSSEStream();
        log("while the stream was closed", extra.sessionId).catch(() => {});
      }, 100);
      return { content: [{ type: "text", text: "dropping" }] };
    });

  return server;
}

async function serve() {
  const transports = new Map();
  const httpServer = http.createServer(async (req, res) => {
    const sid = req.headers["mcp-session-id"];
    let transport = sid ? transports.get(sid) : undefined;
    if (!transport && req.method === "POST" && !sid) {
      const made = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        eventStore: new EventStore(),
        onsessioninitialized: (id) => transports.set(id, made),
      });
      made.onclose = () => { if (made.sessionId) transports.delete(made.sessionId); };
      await build(() => made).connect(made);
      transport = made;
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

serve().catch((err) => { console.error(err); process.exit(1); });
