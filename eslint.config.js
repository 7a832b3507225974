import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** The architecture's arrows, enforced: the core knows no transport, the database layer knows no app. */
const transports = ['express', 'express-*', '@modelcontextprotocol/*', 'oidc-provider', 'pino'];
const noDateNow = { object: 'Date', property: 'now', message: 'Use the injected Clock.' };

/** Each door, by the folder it lives in and the import patterns that name it. */
const DOOR_PATTERNS = {
  'src/http': ['**/http/**'],
  'src/mcp': ['**/mcp/**'],
  'src/dashboard': ['**/dashboard/**'],
  'tools': ['**/tools/**'],
  'oauth': ['**/oauth/**'],
};
const doors = Object.values(DOOR_PATTERNS).flat().filter((p) => !p.startsWith('!'));

/**
 * Doors import the core, the vocabulary and the web kit, never each other, the networks or the database. The MCP
 * server lists the tools (src/mcp → tools), never the other way.
 */
function doorRules() {
  const allowed = { 'src/mcp': ['tools'] };
  return Object.keys(DOOR_PATTERNS).map((door) => {
    const others = Object.entries(DOOR_PATTERNS)
      .filter(([name]) => name !== door && !(allowed[door] ?? []).includes(name))
      .flatMap(([, patterns]) => patterns.filter((p) => !p.startsWith('!')));
    return {
      files: [`${door}/**/*.ts`],
      rules: {
        'no-restricted-imports': ['error', { patterns: [
          { group: others, message: 'Doors do not import each other.' },
          { group: ['**/networks/**', '!**/networks/adapter.js', '!**/networks/network-oauth.js'], message: 'Doors see networks through the core and the vocabulary.' },
          ...(door === 'oauth' ? [] : [{ group: ['**/db/**', 'kysely'], message: 'Doors reach data through the core only.' }]),
        ] }],
      },
    };
  });
}

/**
 * The core: no transport, no door, and of the networks only the adapter contract (it decides; adapters report).
 * Nor src/media: what the core needs of it (the media fetcher, the store) is a port in core/media that the
 * container fills. `core/media` shares the folder name, so src/media is named by the relative path that reaches
 * it from each depth of the core (`../media` from src/core/x.ts is src/media, from src/core/y/x.ts it is core/media).
 */
function coreRules() {
  const rule = (files, media) => ({
    files,
    rules: {
      'no-restricted-imports': ['error', { patterns: [
        { group: transports, message: 'src/core knows nothing of HTTP, MCP or OAuth.' },
        { group: doors, message: 'The core does not import doors.' },
        { group: ['**/networks/**', '!**/networks/adapter.js', '!**/networks/network-oauth.js', '!**/networks/media-source.js'], message: 'The core sees networks through their contract (adapter.ts, network-oauth.ts) only.' },
        { group: ['**/src/media/**', ...media], message: 'The core does not import src/media: it takes what it needs as a port (core/media) that the container fills.' },
      ] }],
      'no-restricted-properties': ['error', noDateNow],
    },
  });
  // Every core file first; then, for each depth, the same rules with the relative path that reaches src/media.
  return [rule(['src/core/**/*.ts'], []), ...[0, 1, 2, 3].map((depth) => rule([`src/core/${'*/'.repeat(depth)}*.ts`], [`${'../'.repeat(depth + 1)}media/**`]))];
}

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'data/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
    },
  },
  {
    // The dashboard's one browser script: plain ES module, browser globals.
    files: ['src/dashboard/assets/**/*.js'],
    languageOptions: {
      sourceType: 'module',
      globals: Object.fromEntries(['window', 'document', 'navigator', 'fetch', 'setTimeout', 'DOMParser', 'HTMLFormElement'].map((g) => [g, 'readonly'])),
    },
  },
  {
    // The API reference's init script: a classic script (it reads document.currentScript), browser globals.
    files: ['src/http/docs-assets/**/*.js'],
    languageOptions: { sourceType: 'script', globals: { window: 'readonly', document: 'readonly' } },
  },
  ...coreRules(),
  {
    files: ['src/workers/**/*.ts', 'src/networks/**/*.ts'],
    rules: { 'no-restricted-properties': ['error', noDateNow] },
  },
  {
    // The spec's shared words: a leaf anyone may import.
    files: ['src/vocabulary/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [{ group: ['../**', '../../**'], message: 'src/vocabulary imports nothing of ours.' }] }] },
  },
  {
    files: ['db/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: ['**/src/**', '**/oauth/**', '**/tools/**'], message: 'db/ is a leaf: it imports nothing of the app.' }] }],
    },
  },
  {
    // Adapters return values; the core decides. They know the vocabulary and their own kit, not the core or the database.
    files: ['src/networks/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [{ group: ['**/core/**', '**/db/**', 'kysely', ...doors], message: 'A network adapter imports neither the core, the database nor a door.' }] }] },
  },
  {
    // Outbound HTTP (the fetch deadline, the address guard, the URL rule): a leaf anyone may import.
    files: ['src/outbound/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [{ group: ['../**', '../../**'], message: 'src/outbound imports nothing of ours.' }] }] },
  },
  {
    // The web plumbing the doors share knows no door, and reaches data only through the ports the container wires.
    files: ['src/web/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [
      { group: doors, message: 'src/web is shared by the doors and imports none of them.' },
      { group: ['**/db/**', 'kysely'], message: 'src/web never reaches into db/: it takes a port the container wires.' },
    ] }] },
  },
  ...doorRules(),
);
