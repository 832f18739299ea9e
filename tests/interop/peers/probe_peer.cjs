// What the TypeScript client peers share, v1 and v2 alike. `Provider`: the SDKs'
// OAuthClientProvider interface; it registers dynamically as `name` with `grants`, keeps what the
// SDK hands it in memory, and follows the authorization server's redirect itself (as a browser
// would: GET the URL, read Location), keeping the callback's parameters in `callback` for
// finishAuth. `probeRun`: what a client under `mcpwire probe --client` does once connected (list
// the tools, call `echo`, print the text), ending the process with 0, or 1 and one line on stderr.
"use strict";

const REDIRECT = "http://127.0.0.1:1/callback";

class Provider {
  constructor(name, grants = ["authorization_code"]) {
    this.name = name; this.grants = grants;
    this.client = undefined; this.saved = undefined; this.verifier = ""; this.callback = undefined;
  }
  get redirectUrl() { return REDIRECT; }
  get clientMetadata() {
    return { client_name: this.name, redirect_uris: [REDIRECT], grant_types: this.grants,
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
    this.callback = new URL(location).searchParams;
  }
}

function probeRun(connect) {
  const run = async () => {
    const client = await connect();
    await client.listTools();
    const result = await client.callTool({ name: "echo", arguments: { text: "hi" } });
    process.stdout.write(result.content.map((c) => c.text || "").join("") + "\n");
    await client.close();
  };
  run().then(() => process.exit(0), (err) => {
    process.stderr.write(`error: ${err && err.message ? err.message : err}\n`);
    process.exit(1);
  });
}

module.exports = { Provider, probeRun };
