// The TypeScript SDK v1 (@modelcontextprotocol/sdk, pinned by tests/interop) as a client of
// mcpwire's server (tests/interop/peers/our_server.py). Runs every feature once and prints one
// JSON object of what it saw; the Python test asserts on it.
//   node ts_client.cjs http URL
//   node ts_client.cjs stdio COMMAND [ARG]...
"use strict";
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StreamableHTTPClientTransport } = require("@modelcontextprotocol/sdk/client/streamableHttp.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");
const {
  CallToolResultSchema, CreateMessageRequestSchema, ElicitRequestSchema, LoggingMessageNotificationSchema,
  ResourceUpdatedNotificationSchema, TaskStatusNotificationSchema,
} = require("@modelcontextprotocol/sdk/types.js");

function waitFor(check, what) {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const timer = setInterval(() => {
      if (check()) { clearInterval(timer); resolve(); }
      else if (Date.now() - started > 10000) { clearInterval(timer); reject(new Error(`timed out waiting for ${what}`)); }
    }, 20);
  });
}

const text = (result) => result.content.map((c) => c.text).join("");

// The HTTP status a ping on `sessionId` gets, on a request of its own (outside the transport).
async function pingStatus(url, sessionId) {
  const response = await fetch(url, { method: "POST", body: JSON.stringify({ jsonrpc: "2.0", id: "probe", method: "ping" }),
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream",
      "mcp-session-id": sessionId, "mcp-protocol-version": "2025-11-25" } });
  await response.text();
  return response.status;
}

async function main() {
  const [kind, ...target] = process.argv.slice(2);
  const transport = kind === "http"
    ? new StreamableHTTPClientTransport(new URL(target[0]))
    : new StdioClientTransport({ command: target[0], args: target.slice(1), stderr: "inherit" });
  const client = new Client({ name: "ts-sdk-interop-client", version: "1.32.2" },
    { capabilities: { elicitation: { form: {} }, sampling: {} } });
  const logs = [];
  const updates = [];
  const asked = { elicitation: [], sampling: [] };  // what our server's requests carried
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    asked.elicitation.push([req.params.message, req.params.requestedSchema.required]);
    return { action: "accept", content: { name: "Ada" } };
  });
  client.setRequestHandler(CreateMessageRequestSchema, async (req) => {
    asked.sampling.push([req.params.messages.map((m) => m.content.text), req.params.maxTokens]);
    return { role: "assistant", model: "test-model", content: { type: "text", text: "Paris" } };
  });
  client.setNotificationHandler(LoggingMessageNotificationSchema, (note) => { logs.push(note.params.data); });
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (note) => { updates.push(note.params.uri); });
  const taskStatuses = [];  // notifications/tasks/status, as [taskId, status]
  client.setNotificationHandler(TaskStatusNotificationSchema, (note) => {
    taskStatuses.push([note.params.taskId, note.params.status]);
  });

  await client.connect(transport);
  const out = {
    protocolVersion: kind === "http" ? transport.protocolVersion : undefined,
    sessionId: kind === "http" ? transport.sessionId : undefined,
    server: client.getServerVersion(),
    capabilities: client.getServerCapabilities(),
  };
  out.tools = (await client.listTools()).tools.map((t) => t.name).sort();
  out.echo = text(await client.callTool({ name: "echo", arguments: { text: "hi there" } }));
  const progress = [];
  out.count = text(await client.callTool({ name: "count", arguments: {} }, undefined,
    { onprogress: (p) => progress.push([p.progress, p.total, p.message]) }));
  out.progress = progress;
  await client.setLoggingLevel("warning");
  out.chattyWarning = text(await client.callTool({ name: "chatty", arguments: {} }));
  await waitFor(() => logs.length >= 1, "the warning log message");
  out.logsAtWarning = logs.splice(0);
  await client.setLoggingLevel("debug");
  await client.callTool({ name: "chatty", arguments: {} });
  await waitFor(() => logs.length >= 2, "both log messages");
  out.logsAtDebug = logs.splice(0);
  out.greet = text(await client.callTool({ name: "greet", arguments: {} }));
  out.askLlm = text(await client.callTool({ name: "ask_llm", arguments: {} }));
  out.asked = { elicitation: [...asked.elicitation], sampling: [...asked.sampling] };
  out.resources = (await client.listResources()).resources.map((r) => r.uri);
  out.note = (await client.readResource({ uri: "test://note" })).contents[0].text;
  await client.subscribeResource({ uri: "test://note" });
  await client.callTool({ name: "touch", arguments: {} });
  await waitFor(() => updates.length >= 1, "notifications/resources/updated");
  out.updates = updates.splice(0);
  await client.unsubscribeResource({ uri: "test://note" });
  await client.callTool({ name: "touch", arguments: {} });  // no longer subscribed: no update may come
  await client.ping();
  await new Promise((resolve) => setTimeout(resolve, 200));
  out.updatesAfterUnsubscribe = updates.splice(0);
  out.prompts = (await client.listPrompts()).prompts.map((p) => p.name);
  out.prompt = (await client.getPrompt({ name: "greeting", arguments: { name: "Grace" } })).messages[0].content.text;
  out.completion = (await client.complete({ ref: { type: "ref/prompt", name: "greeting" },
    argument: { name: "name", value: "A" } })).completion.values;
  out.ping = await client.ping();
  // 2025-11-25 tasks (the SDK's experimental client): each message the stream yields.
  const taskRun = async (name) => {
    const seen = [];
    let taskId;
    const stream = client.experimental.tasks.callToolStream({ name, arguments: {} }, CallToolResultSchema,
      { task: { ttl: 60000 } });
    for await (const message of stream) {
      if (message.type === "taskCreated") taskId = message.task.taskId;
      seen.push(message.type === "result" ? ["result", text(message.result)]
        : message.type === "error" ? ["error", message.error.message] : [message.type, message.task.status]);
    }
    return { seen, taskId };
  };
  const slow = await taskRun("slow_job");
  out.slowJob = slow.seen;
  const vetted = await taskRun("vetted_job");
  out.vettedJob = vetted.seen;
  out.vettedAsked = asked.elicitation.slice(out.asked.elicitation.length);
  await waitFor(() => taskStatuses.some(([id, status]) => id === vetted.taskId && status === "completed"),
    "the completed status of the vetted job");
  out.taskStatuses = {
    slow: taskStatuses.filter(([id]) => id === slow.taskId).map(([, status]) => status),
    vetted: taskStatuses.filter(([id]) => id === vetted.taskId).map(([, status]) => status),
  };
  out.taskGot = (await client.experimental.tasks.getTask(slow.taskId)).status;
  try {
    await client.experimental.tasks.cancelTask(slow.taskId);
    out.cancelFinished = "accepted";
  } catch (err) {
    out.cancelFinished = err.code;
  }
  if (kind === "http") {
    const sessionId = transport.sessionId;
    out.openStatus = await pingStatus(target[0], sessionId);
    await transport.terminateSession();
    out.terminated = transport.sessionId === undefined;
    out.closedStatus = await pingStatus(target[0], sessionId);  // the server forgot the session: 404
  }
  await client.close();
  process.stdout.write(JSON.stringify(out) + "\n");
}

main().catch((err) => { console.error(err && err.stack || err); process.exit(1); });
