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

const REDIRECT = "http://127.0.0.1:1/callback";

class Provider {
  constructor() { this.client = undefined; this.saved = undefined; this.verifier = ""; this.pendingCode = undefined; }
  get redirectUrl() { return REDIRECT; }
  get clientMetadata() {
    return { client_name: "ts-sdk-probe-client", redirect_uris: [REDIRECT], grant_types: ["authorization_code"],
             response_types: ["code"], token_endpoint_auth_method: "none" };
  }
  clientInformation() { return this.client; }
  saveClientInformation(info) { this.client = info; }
  tokens() { return this.saved; }
  saveTokens(tokens) { this.saved = tokens; }
  saveCodeVerifier(v) { this.verifier = v; }
  codeVerifier() { return this.verifier; }
  async redirectToAuthorization(url) {
    const answer = await fetch(url, { redirect: "manual" });
    const location = answer.headers.get("location");
    if (!location) throw new Error(`the authorization endpoint answered ${answer.status} without a redirect`);
    this.pendingCode = new URL(location).searchParams.get("code");
  }
}

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
      if (!(err instanceof UnauthorizedError) || provider.pendingCode === undefined) throw err;
      await transport.finishAuth(provider.pendingCode);
      provider.pendingCode = undefined;
    }
  }
  throw new Error("still unauthorized after 3 attempts");
}

async function main() {
  const [kind, ...target] = process.argv.slice(2);
  const client = await connected(kind, target, new Provider());
  await client.listTools();
  const result = await client.callTool({ name: "echo", arguments: { text: "hi" } });
  process.stdout.write(result.content.map((c) => c.text || "").join("") + "\n");
  await client.close();
}

main().then(() => process.exit(0), (err) => {
  process.stderr.write(`error: ${err && err.message ? err.message : err}\n`);
  process.exit(1);
});
