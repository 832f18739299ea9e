// The TypeScript SDK v1 client with its OAuth provider, against mcpwire's protected server:
//   node ts_auth_client.cjs URL
// The provider registers dynamically, follows the authorization server's redirect itself (as a
// browser would: GET the URL, read Location), then finishes with the code and calls `whoami`.
// Prints {"text": ..., "authorizations": N} on success.
"use strict";
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StreamableHTTPClientTransport } = require("@modelcontextprotocol/sdk/client/streamableHttp.js");
const { UnauthorizedError } = require("@modelcontextprotocol/sdk/client/auth.js");

const REDIRECT = "http://127.0.0.1:1/callback";

class Provider {
  constructor() { this.client = undefined; this.saved = undefined; this.verifier = ""; this.pendingCode = undefined; }
  get redirectUrl() { return REDIRECT; }
  get clientMetadata() {
    return { client_name: "ts-sdk-auth-interop", redirect_uris: [REDIRECT], grant_types: ["authorization_code", "refresh_token"],
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

async function main() {
  const url = new URL(process.argv[2]);
  const provider = new Provider();
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
      if (!(err instanceof UnauthorizedError) || provider.pendingCode === undefined) throw err;
      await transport.finishAuth(provider.pendingCode);
      provider.pendingCode = undefined;
      authorizations += 1;
    }
  }
  throw new Error("still unauthorized after 3 attempts");
}

main().catch((err) => { console.error(err && err.stack || err); process.exit(1); });
