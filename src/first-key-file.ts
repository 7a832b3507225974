import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import type { Config } from './config.js';

export interface FirstKeyFile {
  /** Absolute path. */
  path: string;
  /** As printed: relative to the working directory (`./data/first-key.env`) when under it, else absolute. */
  display: string;
}

/** Where the first start keeps its key: beside the SQLite database, or in `./data` (as uploads do by default). */
export function firstKeyFile(config: Pick<Config, 'database'>, cwd = process.cwd()): FirstKeyFile {
  const dir = config.database.dialect === 'sqlite' ? dirname(config.database.file) : './data';
  const path = resolve(cwd, dir, 'first-key.env');
  const rel = relative(cwd, path);
  return { path, display: rel.startsWith('..') || isAbsolute(rel) ? path : `./${rel}` };
}

/**
 * Writes the first key as shell `export` lines, readable by the owner only (mode 0600 from creation: written to a
 * new file, then renamed over any older one, so no moment exists where another user could read it). Returns
 * null when written, or the reason it could not be (the banner still shows the key).
 */
export function writeFirstKeyFile(file: FirstKeyFile, first: { key: string; workspaceId: string; baseUrl: string }): string | null {
  const text = [
    '# The first API key of this installation, written at its first start; readable by its owner only.',
    `# Load it into a shell with:  . ${file.display}`,
    `export KEY=${first.key}`,
    `export WS=${first.workspaceId}`,
    `export BASE=${first.baseUrl}`,
    '',
  ].join('\n');
  const temporary = join(dirname(file.path), `.first-key.${process.pid}.tmp`);
  try {
    mkdirSync(dirname(file.path), { recursive: true, mode: 0o700 });
    writeFileSync(temporary, text, { mode: 0o600, flag: 'wx' });
    renameSync(temporary, file.path);
    return null;
  } catch (err) {
    rmSync(temporary, { force: true });
    return err instanceof Error ? err.message : String(err);
  }
}
