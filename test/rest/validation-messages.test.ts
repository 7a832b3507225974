import { expect, it } from 'vitest';
import { z } from 'zod';
import { validationError } from '../../src/core/errors.js';
import { check } from '../../src/dashboard/forms.js';
import { describeEachDb } from '../support/server.js';

type Refusal = { error: string; message: string; fields: { path: string; message: string }[] };

/** Issue 17: a refusal reads as a sentence about the field, the same words on every door. */
describeEachDb('validation messages', (server) => {
  async function refused(body: unknown): Promise<Refusal> {
    const ws = await server().workspace();
    const res = await server().request<Refusal>('POST', `/api/v1/workspaces/${ws.workspace_id}/contents`, { key: ws.api_key, body });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('validation_failed');
    return res.body;
  }

  it('names a missing field, an unknown option, a size limit and an unknown field in words', async () => {
    const missing = await refused({ content_type: 'text', target_platforms: ['threads'], text: 'Hello' });
    expect(missing.message).toBe('brand_id is required');
    expect(missing.fields).toEqual([{ path: 'brand_id', message: 'is required' }]);

    const several = await refused({ brand_id: 'brand_x', content_type: 'tweet', target_platforms: ['Threads'], text: 'x'.repeat(100_001), colour: 'red' });
    expect(several.message.split('; ').sort()).toEqual(
      [
        'content_type must be one of text, photo, video, reel, thread',
        'target_platforms[0] must be one of instagram, facebook, threads, youtube, linkedin, x, bluesky, mastodon, tiktok, pinterest (lower case: threads)',
        'text must be at most 100000 characters',
        'unknown field colour',
      ].sort(),
    );
    expect(several.fields).toContainEqual({ path: 'colour', message: 'unknown field' });
    expect(several.fields).toContainEqual({ path: 'text', message: 'must be at most 100000 characters' });

    const wrongType = await refused({ brand_id: 42, content_type: 'text', target_platforms: ['threads'], text: 'Hello' });
    expect(wrongType.message).toBe('brand_id must be a string');

    const notObject = await refused(['not', 'an', 'object']);
    expect(notObject.message).toBe('the request body must be an object');
    expect(notObject.message).not.toMatch(/Invalid|expected|received/);
  });

  it('keeps the sentences the core writes itself', async () => {
    const ws = await server().workspace();
    const brand = await server().request<{ id: string }>('POST', `/api/v1/workspaces/${ws.workspace_id}/brands`, { key: ws.api_key, body: { name: 'B' } });
    const res = await server().request<Refusal>('PUT', `/api/v1/workspaces/${ws.workspace_id}/brands/${brand.body.id}/queue`, {
      key: ws.api_key,
      body: { time_zone: 'Mars/Olympus', slots: [{ days: ['mon'], time: '25:00' }] },
    });
    expect(res.status).toBe(400);
    expect(res.body.message).toContain('time_zone: unknown time zone; use an IANA name such as "America/New_York"');
    expect(res.body.message).toContain('slots[0].time: expected a local time HH:MM between 00:00 and 23:59');
  });
});

it('every door reads the same words: the MCP door through validationError, dashboard forms through the issues', () => {
  const schema = z.strictObject({ name: z.string().min(1).max(5), count: z.number().int().min(1), when: z.iso.datetime(), site: z.url() });
  const parsed = schema.safeParse({ name: '', count: 1.5, when: 'soon', site: 'nope', extra: true });
  expect(parsed.success).toBe(false);
  if (parsed.success) return;
  // No `where`: the MCP door validates tool arguments without a location.
  const error = validationError(parsed.error);
  expect(error.message.split('; ').sort()).toEqual(
    ['count must be an integer', 'name must not be empty', 'site must be a URL (https://…)', 'unknown field extra', 'when must be an ISO 8601 date-time such as 2026-03-01T09:00:00Z'].sort(),
  );
  expect(validationError(z.object({ a: z.string() }).safeParse('x').error!).message).toBe('the input must be an object');
  const form = check(schema, { name: 'toolong', count: 0, when: '2026-03-01T09:00:00Z', site: 'https://example.com' });
  expect(form).toEqual({ ok: false, errors: { name: 'must be at most 5 characters', count: 'must be at least 1' } });
});
