// The official TypeScript MCP client reaching cairn the OAuth way: from a
// 401 it finds cairn's protected resource metadata, then the authorization
// server, gets a client_credentials token for cairn's resource and calls
// a tool with it.
// node ts-oauth.mjs <cairn /mcp URL> <client id> <client secret> <scope>
// Prints one JSON object of what it saw; the Go test judges it.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ClientCredentialsProvider } from '@modelcontextprotocol/sdk/client/auth-extensions.js';

const [url, clientId, clientSecret, scope] = process.argv.slice(2);
const provider = new ClientCredentialsProvider({ clientId, clientSecret, scope });
const client = new Client({ name: 'ts-oauth', version: '1.0.0' }, { capabilities: {} });
await client.connect(new StreamableHTTPClientTransport(new URL(url), { authProvider: provider }));
const out = {};
out.token = provider.tokens()?.access_token;
out.tools = (await client.listTools()).tools.map((t) => t.name);
const created = await client.callTool({ name: 'task_create', arguments: { title: 'From an OAuth client' } });
out.created = created.structuredContent;
console.log(JSON.stringify(out));
await client.close();
process.exit(0);
