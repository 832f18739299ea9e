// The TypeScript SDK v2 client (@modelcontextprotocol/client, pinned by tests/interop/_node.py) as
// a command for `mcpwire probe --client`: connects, lists the tools, calls `echo` and prints the
// text of the result. It opts into the SDK's version negotiation (`mode: 'auto'`: server/discover
// first, 2026-07-28 where the server speaks it, else the 2025 `initialize`; the SDK's default,
// 'legacy', sends the 2025 sequence only). Declares form elicitation and declines every request
// for it (2025: a server's request; 2026-07-28: an input request of an `input_required` round).
// Over HTTP it has an OAuth provider: it registers dynamically and follows the authorization
// server's redirect itself (as a browser would: GET the URL, read Location), then finishes with
// the callback's parameters and connects again (at most 3 times).
// ES modules ignore NODE_PATH, so the pinned node_modules folder is the first argument:
//   node ts2_probe_client.mjs MODULES http URL
//   node ts2_probe_client.mjs MODULES stdio COMMAND [ARG]...
// A client error ends it with status 1 and one line on stderr.
import { createRequire } from "node:module";
import path from "node:path";

const [modules, kind, ...target] = process.argv.slice(2);
const require = createRequire(path.join(modules, "noop.js"));
const { Client, StreamableHTTPClientTransport, UnauthorizedError } = require("@modelcontextprotocol/client");
const { StdioClientTransport } = require("@modelcontextprotocol/client/stdio");
const { Provider, probeRun } = createRequire(import.meta.url)("./probe_peer.cjs");

async function connected(provider) {
  for (let attempt = 0; attempt < 3; attempt++) {
    const transport = kind === "http"
      ? new StreamableHTTPClientTransport(new URL(target[0]), { authProvider: provider })
      : new StdioClientTransport({ command: target[0], args: target.slice(1), stderr: "inherit" });
    const client = new Client({ name: "ts-sdk2-probe-client", version: "2.4.0" },
      { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: "auto" } });
    client.setRequestHandler("elicitation/create", async () => ({ action: "decline" }));
    try {
      await client.connect(transport);
      return client;
    } catch (err) {
      if (!(err instanceof UnauthorizedError) || provider.callback === undefined) throw err;
      await transport.finishAuth(provider.callback);
      provider.callback = undefined;
    }
  }
  throw new Error("still unauthorized after 3 attempts");
}

if (kind !== "http" && kind !== "stdio") {
  process.stderr.write("usage: ts2_probe_client.mjs MODULES http|stdio TARGET...\n");
  process.exit(1);
}
probeRun(() => connected(new Provider("ts-sdk2-probe-client")));
