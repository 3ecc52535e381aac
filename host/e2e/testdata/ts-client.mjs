// The official TypeScript MCP client against cairn (2025-11-25 era):
// node ts-client.mjs stdio <cairn> <args...>  |  node ts-client.mjs http <url>
// Prints one JSON object of what it saw; the Go test judges it.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

const [mode, target, ...rest] = process.argv.slice(2);
const client = new Client({ name: 'ts-client', version: '1.0.0' }, { capabilities: {} });
const transport = mode === 'stdio'
  ? new StdioClientTransport({ command: target, args: rest, env: process.env, stderr: 'ignore' })
  : new StreamableHTTPClientTransport(new URL(target));
const updates = [];
client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => { updates.push(n.params.uri); });

const out = {};
await client.connect(transport);
out.server = client.getServerVersion()?.name;
out.capabilities = Object.keys(client.getServerCapabilities() ?? {}).sort();
out.tools = (await client.listTools()).tools.map((t) => t.name);

const created = await client.callTool({ name: 'task_create', arguments: { title: 'From the TypeScript client' } });
out.created = created.structuredContent;
out.links = created.content.filter((c) => c.type === 'resource_link').map((c) => c.uri);
const id = created.structuredContent.task_id;
const uri = `cairn://tasks/${id}`;

const invalid = await client.callTool({ name: 'task_create', arguments: { title: '' } });
out.invalid = { isError: invalid.isError, code: invalid.structuredContent?.error?.code };

out.prompts = (await client.listPrompts()).prompts.map((p) => p.name);
const prompt = await client.getPrompt({ name: 'sdd-plan-phase', arguments: { phase: '2' } });
out.promptText = prompt.messages[0].content.text;

const comp = await client.complete({ ref: { type: 'ref/resource', uri: 'cairn://tasks/{task_id}' }, argument: { name: 'task_id', value: 'T-' } });
out.completion = comp.completion.values;

await client.subscribeResource({ uri });
await client.callTool({ name: 'thought_record', arguments: { task_id: id, type: 'decision', content: 'typed by node' } });
const deadline = Date.now() + 15000;
while (!updates.includes(uri) && Date.now() < deadline) {
  await new Promise((r) => setTimeout(r, 50));
}
out.updates = updates;
out.read = (await client.readResource({ uri })).contents[0].text;
console.log(JSON.stringify(out));
await client.close();
process.exit(0);
