// The official MCP TypeScript SDK against a running platformapi: connect
// with a bearer token, list the tools, call every tool that needs no
// argument plus a few that do, on the demo world. The SDK's Client.callTool
// validates each result's structuredContent against the tool's outputSchema
// and throws when it does not match. Usage:
//   MCP_URL=http://127.0.0.1:18787/mcp PLATFORMAPI_TOKEN=svc_pat_… node .ci/mcp-sdk-client.mjs
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const url = process.env.MCP_URL;
const token = process.env.PLATFORMAPI_TOKEN;
const fail = (msg) => { console.error(`FAIL: ${msg}`); process.exit(1); };
if (!url || !token) fail('set MCP_URL and PLATFORMAPI_TOKEN');

const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${token}` } },
});
const client = new Client({ name: 'platformapi-ci-ts-sdk', version: '1.0.0' });
await client.connect(transport);

const { tools } = await client.listTools();
if (tools.length < 20) fail(`only ${tools.length} tools listed`);
const calls = [];
for (const t of tools) {
  if (t.outputSchema?.type !== 'object') fail(`${t.name} has no object outputSchema`);
  if ((t.inputSchema.required ?? []).length === 0) calls.push([t.name, {}]);
}
calls.push(['get-ai-model', { model_id: '1' }], ['list-ai-nodes', { model: '1', fields: 'status,models' }],
  ['list-ai-models', { sort: 'size_gb', order: 'desc', fields: 'repo,size_gb' }]);
for (const [name, args] of calls) {
  const res = await client.callTool({ name, arguments: args }); // throws when structuredContent breaks outputSchema
  if (res.isError || typeof res.structuredContent !== 'object') fail(`${name}: ${JSON.stringify(res.content)}`);
}
const refused = await client.callTool({ name: 'get-ai-model', arguments: { model_id: '999999' } });
if (!refused.isError || refused.structuredContent?.next_tool !== 'list-ai-models') {
  fail(`unknown model: ${JSON.stringify(refused.structuredContent)}`);
}
await client.close();
console.log(`TS SDK: ${tools.length} tools listed, ${calls.length} calls validated against their outputSchema`);
