// The TypeScript SDK v1 client (@modelcontextprotocol/sdk, pinned by tests/interop) as a command
// for `mcpwire probe --client`: connects (initialize), lists the tools, calls `echo` and prints
// the text of the result. Declares form elicitation and declines every request for it. Over
// HTTP it has the SDK's OAuth provider: it registers dynamically and follows the authorization
// server's redirect itself (as a browser would: GET the URL, read Location), then finishes with
// the code and connects again (at most 3 times).
//   node ts_probe_client.cjs http URL
//   node ts_probe_client.cjs stdio COMMAND [ARG]...
// A client error ends it with status 1 and one line on stderr.
"use strict";
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StreamableHTTPClientTransport } = require("@modelcontextprotocol/sdk/client/streamableHttp.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");
const { ElicitRequestSchema } = require("@modelcontextprotocol/sdk/types.js");
const { UnauthorizedError } = require("@modelcontextprotocol/sdk/client/auth.js");
const { Provider, probeRun } = require("./probe_peer.cjs");

async function connected(kind, target, provider) {
  for (let attempt = 0; attempt < 3; attempt++) {
    const transport = kind === "http"
      ? new StreamableHTTPClientTransport(new URL(target[0]), { authProvider: provider })
      : new StdioClientTransport({ command: target[0], args: target.slice(1), stderr: "inherit" });
    const client = new Client({ name: "ts-sdk-probe-client", version: "1.32.2" },
      { capabilities: { elicitation: { form: {} } } });
    client.setRequestHandler(ElicitRequestSchema, async () => ({ action: "decline" }));
    try {
      await client.connect(transport);
      return client;
    } catch (err) {
      if (!(err instanceof UnauthorizedError) || provider.callback === undefined) throw err;
      await transport.finishAuth(provider.callback.get("code"));
      provider.callback = undefined;
    }
  }
  throw new Error("still unauthorized after 3 attempts");
}

const [kind, ...target] = process.argv.slice(2);
probeRun(() => connected(kind, target, new Provider("ts-sdk-probe-client")));
