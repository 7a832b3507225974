import { describe, expect, it } from 'vitest';
import { table } from '../../src/dashboard/layout.js';
import { contentTitle, handleOf } from '../../src/dashboard/names.js';
import { meterExplanation, meterShown, meterWord, modeWord, operationWord, price } from '../../src/dashboard/words.js';
import { html } from '../../src/web/html.js';

describe('interface words, names and phone tables', () => {
  it('English product words for the spec codes; no meter for a feature that does not exist', () => {
    expect(['plano', 'creditos', 'automatico'].map(modeWord)).toEqual(['Plan', 'Credits', 'Plan, then credits']);
    expect(meterWord('publicacoes')).toBe('Publications this cycle');
    expect(meterWord('criacao_de_conteudos')).toBe('Content creations this cycle');
    expect(operationWord('publicacao')).toBe('Publication');
    expect(meterShown('inspiration_library')).toBe(false);
    expect(meterShown('publicacoes')).toBe(true);
  });

  it('prices in English with the currency code, whatever the browser’s language; each cycle meter explained', () => {
    expect(price(49, 'BRL')).toBe('BRL 49.00');
    expect(price(9.5, 'USD')).toBe('USD 9.50');
    expect(price(49, 'XYZ1')).toBe('49 XYZ1');
    expect(meterExplanation('criacao_de_conteudos')).toMatch(/starts publishing/);
    expect(meterExplanation('publicacoes')).toMatch(/each network/);
  });

  it('a content is titled by its first line, cut near 60 characters at a word end', () => {
    expect(contentTitle({ content_type: 'text', text: '\n  Launch day!  \nMore below', title: null, thread: null })).toBe('Launch day!');
    const long = contentTitle({ content_type: 'text', text: 'word '.repeat(30), title: null, thread: null });
    expect(long.endsWith('…')).toBe(true);
    expect(Array.from(long).length).toBeLessThanOrEqual(61);
    expect(long).not.toMatch(/wor…$/);
    expect(contentTitle({ content_type: 'thread', text: null, title: null, thread: ['First post'] })).toBe('First post');
    expect(contentTitle({ content_type: 'photo', text: '   ', title: null, thread: null })).toBe('Untitled photo');
    expect(handleOf({ name: '@acmecoffee' })).toBe('@acmecoffee');
    expect(handleOf({ name: 'Acme Coffee (@acme)' })).toBe('@acme');
    expect(handleOf({ name: 'Acme Coffee' })).toBeNull();
  });

  it('each table cell carries its column name, so a phone shows rows as labelled cards', () => {
    const out = table({
      caption: 'Keys',
      head: ['Name', 'Status', 'Actions'],
      rows: [html`<tr><th scope="row">${'<td> in a name'}</th><td>active</td><td><button>Revoke</button></td></tr>`],
      empty: 'none',
    }).text;
    expect(out).toContain('<th data-label="Name" scope="row">&lt;td&gt; in a name</th><td data-label="Status">active</td><td data-label="Actions">');
    expect(out).toContain('<table class="cards">');
  });
});
