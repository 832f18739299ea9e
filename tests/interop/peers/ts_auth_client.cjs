// The TypeScript SDK v1 client with its OAuth provider, against mcpwire's protected server:
//   node ts_auth_client.cjs URL
// The provider registers dynamically, follows the authorization server's redirect itself (as a
// browser would: GET the URL, read Location), then finishes with the code and calls `whoami`.
// Prints {"text": ..., "authorizations": N} on success.
"use strict";
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StreamableHTTPClientTransport } = require("@modelcontextprotocol/sdk/client/streamableHttp.js");
const { UnauthorizedError } = require("@modelcontextprotocol/sdk/client/auth.js");
const { Provider } = require("./probe_peer.cjs");

async function main() {
  const url = new URL(process.argv[2]);
  const provider = new Provider("ts-sdk-auth-interop", ["authorization_code", "refresh_token"]);
  let authorizations = 0;
  for (let attempt = 0; attempt < 3; attempt++) {
    const transport = new StreamableHTTPClientTransport(url, { authProvider: provider });
    const client = new Client({ name: "ts-sdk-auth-interop", version: "1.32.2" }, { capabilities: {} });
    try {
      await client.connect(transport);
      const result = await client.callTool({ name: "whoami", arguments: {} });
      process.stdout.write(JSON.stringify({ text: result.content[0].text, authorizations,
                                            scope: provider.saved && provider.saved.scope }) + "\n");
      await client.close();
      return;
    } catch (err) {
      if (!(err instanceof UnauthorizedError) || provider.callback === undefined) throw err;
      await transport.finishAuth(provider.callback.get("code"));
      provider.callback = undefined;
      authorizations += 1;
    }
  }
  throw new Error("still unauthorized after 3 attempts");
}

main().catch((err) => { console.error(err && err.stack || err); process.exit(1); });
