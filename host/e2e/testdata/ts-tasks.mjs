// The official TypeScript MCP client's experimental tasks API (2025-11-25)
// against cairn: node ts-tasks.mjs stdio <cairn> <args...>  |  node ts-tasks.mjs http <url>
// Prints one JSON object of what it saw; the Go test judges it.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';

const [mode, target, ...rest] = process.argv.slice(2);
const client = new Client({ name: 'ts-tasks', version: '1.0.0' }, { capabilities: {} });
await client.connect(mode === 'stdio'
  ? new StdioClientTransport({ command: target, args: rest, env: process.env, stderr: 'ignore' })
  : new StreamableHTTPClientTransport(new URL(target)));
const tasks = client.experimental.tasks;
const out = { capabilities: client.getServerCapabilities()?.tasks ?? null };
const tools = (await client.listTools()).tools;
out.taskSupport = Object.fromEntries(tools.filter((t) => t.execution?.taskSupport).map((t) => [t.name, t.execution.taskSupport]));

// A call the client drives as a task to its end: created, polled, result
// (validated by the client against the tool's output schema).
out.stream = [];
for await (const m of tasks.callToolStream({ name: 'computer_agent_run', arguments: { task: 'say you are done' } }, CallToolResultSchema, { task: { ttl: 600000 } })) {
  out.stream.push(m.type);
  if (m.type === 'result') out.finalText = m.result.structuredContent?.finalText;
  if (m.type === 'error') out.streamError = String(m.error);
}

// One left running, then cancelled.
let id;
for await (const m of tasks.callToolStream({ name: 'computer_agent_run', arguments: { task: 'keep looking at the screen', maxTurns: 500 } }, CallToolResultSchema, { task: { ttl: 600000 } })) {
  if (m.type === 'taskCreated') { id = m.task.taskId; break; }
}
out.cancelled = (await tasks.cancelTask(id)).status;
out.got = (await tasks.getTask(id)).status;
out.listed = (await tasks.listTasks()).tasks.map((t) => t.status);
await client.close();
process.stdout.write(JSON.stringify(out));
