import { readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Writable } from 'node:stream';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { tools } from '../../tools/index.js';
import { SERVER_ERROR_MESSAGE, ServiceError } from '../../src/core/errors.js';
import { createLogger } from '../../src/observability/logger.js';
import { buildMcpServer } from '../../src/mcp/server.js';
import type { AnyTool, ToolServices } from '../../tools/define-tool.js';
import { toolFailure } from '../../src/mcp/tool-result.js';

const TOOLS_DIR = fileURLToPath(new URL('../../tools/', import.meta.url));
const README = fileURLToPath(new URL('../../README.md', import.meta.url));
// index.ts is the registry and define-tool.ts the type every tool file uses; every other file is one tool.
const toolFiles = readdirSync(TOOLS_DIR).filter((f) => f.endsWith('.ts') && f !== 'index.ts' && f !== 'define-tool.ts');

function isTool(value: unknown): value is AnyTool {
  return typeof value === 'object' && value !== null && 'name' in value && 'handle' in value && 'inputSchema' in value;
}

describe('MCP tool registry (tools/index.ts)', () => {
  it('lists exactly one tool per file in tools/, named after its file', async () => {
    const fromFiles: AnyTool[] = [];
    for (const file of toolFiles) {
      const exported = Object.values(await import(pathToFileURL(join(TOOLS_DIR, file)).href) as Record<string, unknown>).filter(isTool);
      expect(exported, `${file} exports one tool`).toHaveLength(1);
      const tool = exported[0]!;
      expect(tool.name).toBe(basename(file, '.ts').replace(/-/g, '_'));
      fromFiles.push(tool);
    }
    expect(new Set(tools)).toEqual(new Set(fromFiles));
    expect(new Set(tools.map((t) => t.name)).size).toBe(tools.length);
  });

  it("README.md's MCP section names exactly the tools of the registry", () => {
    const readme = readFileSync(README, 'utf8');
    // The section from its heading to the next `## `; its tool list runs from "Tools:" to the dash that ends it.
    const section = /^## AI assistants: MCP and OAuth\n([\s\S]*?)(?=^## )/m.exec(readme)?.[1];
    expect(section, 'README.md has the "## AI assistants: MCP and OAuth" section').toBeDefined();
    const list = /Tools:([\s\S]*?) — /.exec(section ?? '')?.[1];
    expect(list, 'the MCP section lists the tools after "Tools:"').toBeDefined();
    const named = [...(list ?? '').matchAll(/`([a-z_]+)`/g)].map((m) => m[1]);
    expect(named.sort()).toEqual(tools.map((t) => t.name).sort());
  });

  describe.each(tools.map((t) => [t.name, t] as const))('%s', (_name, tool) => {
    it('has a snake_case verb_noun name', () => {
      expect(tool.name).toMatch(/^[a-z]+(_[a-z]+)+$/);
    });

    it('states all four annotations as booleans', () => {
      for (const hint of ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const) {
        expect(typeof tool.annotations[hint], hint).toBe('boolean');
      }
      // A read-only tool cannot be destructive (MCP: destructiveHint is meaningful only when not read-only).
      if (tool.annotations.readOnlyHint) expect(tool.annotations.destructiveHint).toBe(false);
    });

    it('has a title and a description written for a model', () => {
      expect(tool.title.trim().length).toBeGreaterThan(0);
      expect(tool.description.length).toBeGreaterThanOrEqual(60);
    });

    it('takes a zod object at the root and declares a zod object output', () => {
      expect(tool.inputSchema).toBeInstanceOf(z.ZodObject);
      expect(tool.outputSchema).toBeInstanceOf(z.ZodObject);
    });
  });

  it('renders every schema as JSON Schema with type "object" at the root (no root $ref or union)', async () => {
    const scope = {
      principal: () => Promise.reject(new Error('listing needs no principal')),
      services: {} as ToolServices,
      log: createLogger('silent'),
      requestId: () => 'req_test',
      baseUrl: 'http://localhost:3000',
    };
    const server = buildMcpServer(scope);
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    const client = new Client({ name: 'registry-test', version: '1.0.0' });
    await Promise.all([server.connect(serverSide), client.connect(clientSide)]);
    try {
      const { tools: listed } = await client.listTools();
      expect(listed).toHaveLength(tools.length);
      for (const tool of listed) {
        for (const schema of [tool.inputSchema, tool.outputSchema]) {
          expect(schema, tool.name).toMatchObject({ type: 'object' });
          expect(schema, tool.name).not.toHaveProperty('$ref');
          expect(schema, tool.name).not.toHaveProperty('anyOf');
        }
      }
    } finally {
      await client.close();
    }
  });
});

describe('tool results (src/mcp/tool-result.ts)', () => {
  function capture() {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    return { log: createLogger('error', sink), lines };
  }

  it('a ServiceError becomes an isError result with the REST body as its only text, never as structuredContent', () => {
    const { log } = capture();
    const err = new ServiceError('limit_reached', 'The plan is full.', { meter: 'publicacoes', limit: 1, used: 1, resolve: 'upgrade' });
    const result = toolFailure(err, 'req_abc12345', log);
    const body = { meter: 'publicacoes', limit: 1, used: 1, resolve: 'upgrade', error: 'limit_reached', message: 'The plan is full.', request_id: 'req_abc12345' };
    // structuredContent must match the tool's outputSchema, which an error body never does (SDK v1 and the
    // Inspector reject it even on isError results): see test/mcp/clients.test.ts for every tool through them.
    expect(result).toEqual({ isError: true, content: [{ type: 'text', text: JSON.stringify(body) }] });
    expect(result).not.toHaveProperty('structuredContent');
  });

  it('an unknown exception becomes server_error with the fixed message; the stack is logged, never returned', () => {
    const { log, lines } = capture();
    const result = toolFailure(new Error('database exploded at /secret/path'), 'req_abc12345', log);
    const text = result.content[0];
    expect(JSON.parse(text?.type === 'text' ? text.text : 'null')).toEqual({ error: 'server_error', message: SERVER_ERROR_MESSAGE, request_id: 'req_abc12345' });
    expect(JSON.stringify(result)).not.toContain('exploded');
    expect(lines.join('')).toContain('database exploded');
  });
});
