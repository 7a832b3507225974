import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** The architecture's arrows, enforced: the core knows no transport, the database layer knows no app. */
const transports = ['express', 'express-*', '@modelcontextprotocol/*', 'oidc-provider', 'pino'];

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
    files: ['src/core/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: transports, message: 'src/core knows nothing of HTTP, MCP or OAuth.' }, { group: ['**/http/**', '**/mcp/**', '**/dashboard/**', '**/oauth/**'], message: 'The core does not import doors.' }] }],
      'no-restricted-properties': ['error', { object: 'Date', property: 'now', message: 'Use the injected Clock.' }],
    },
  },
  {
    files: ['db/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: ['**/src/**', '**/oauth/**', '**/tools/**'], message: 'db/ is a leaf: it imports nothing of the app.' }] }],
    },
  },
  {
    files: ['src/http/**/*.ts', 'src/mcp/**/*.ts', 'src/dashboard/**/*.ts', 'tools/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: ['**/db/**', 'kysely'], message: 'Doors reach data through the core only.' }] }],
    },
  },
);
