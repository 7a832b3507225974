import { PassThrough, type Readable } from 'node:stream';
import busboy from 'busboy';
import type { Request } from 'express';
import { ServiceError } from '../core/errors.js';

export interface MultipartLimits {
  /** Text fields. */
  fields: number;
  /** Bytes of one text field. */
  fieldSize: number;
  files: number;
  /** Bytes of one file. */
  fileSize: number;
}

/** One file of the form, to be read (or left alone: whatever is not read is drained). */
export interface IncomingFile {
  field: string;
  filename: string;
  mimeType: string;
  stream: Readable;
}

export interface ReadFormOptions<T> {
  limits: MultipartLimits;
  /**
   * Decides on the form from its first field (the CSRF token). A refused form is drained: no later field is kept
   * and no file reaches `onFile`.
   */
  accept(first: { name: string; value: string }): boolean;
  /** Consumes a file while the rest of the form is still arriving; `fields` holds the fields sent before it. */
  onFile(file: IncomingFile, fields: Readonly<Record<string, string[]>>): Promise<T>;
}

export interface ReadFormResult<T> {
  accepted: boolean;
  fields: Record<string, string[]>;
  files: { field: string; filename: string; truncated: boolean; result: PromiseSettledResult<T> }[];
  /** A field was cut or parts were dropped at the limits: what was read is not the whole form. */
  overLimit: boolean;
}

/** The error a file stream ends with when it passes `limits.fileSize`, so its consumer stops and keeps nothing. */
export class FileTooLarge extends Error {}

/**
 * Reads a multipart (or urlencoded) form as it streams in, handing files to `onFile` without holding them in
 * memory. Files never reach `onFile` before `accept` approved the first field, so a forged form cannot store
 * anything.
 */
export function readForm<T>(req: Request, options: ReadFormOptions<T>): Promise<ReadFormResult<T>> {
  let parser: busboy.Busboy;
  try {
    parser = busboy({
      headers: req.headers,
      defParamCharset: 'utf8',
      limits: { ...options.limits, parts: options.limits.fields + options.limits.files, headerPairs: 20 },
    });
  } catch {
    req.resume();
    return Promise.reject(new ServiceError('invalid_request', 'The form could not be read. Reload the page and try again.'));
  }

  return new Promise((resolve, reject) => {
    let state: 'pending' | 'accepted' | 'refused' = 'pending';
    let overLimit = false;
    const fields: Record<string, string[]> = {};
    const files: { file: { field: string; filename: string; truncated: boolean }; result: Promise<T> }[] = [];

    parser.on('field', (name, value, info) => {
      if (state === 'pending') state = options.accept({ name, value }) ? 'accepted' : 'refused';
      if (state !== 'accepted') return;
      if (info.nameTruncated || info.valueTruncated) overLimit = true;
      (fields[name] ??= []).push(value);
    });

    parser.on('file', (name, stream, info) => {
      // A file before the token is refused like a wrong token: the token must come first.
      if (state === 'pending') state = 'refused';
      // An empty file input still sends a part, without a file name.
      if (state !== 'accepted' || !info.filename) {
        stream.resume();
        return;
      }
      // busboy stalls if its own stream is destroyed, and a consumer that gives up destroys what it reads:
      // hand over a pass-through instead and drain the original when the consumer lets go.
      const body = new PassThrough();
      const file = { field: name, filename: info.filename, truncated: false };
      stream.on('limit', () => {
        file.truncated = true;
        overLimit = true;
        body.destroy(new FileTooLarge(`${info.filename} is larger than the dashboard accepts.`));
      });
      // A client that goes away mid-file must end the upload too, not leave it waiting.
      stream.on('error', (err) => body.destroy(err));
      body.on('close', () => {
        stream.unpipe(body);
        stream.resume();
      });
      stream.pipe(body);
      const snapshot = Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, [...v]]));
      const result = options.onFile({ field: name, filename: info.filename, mimeType: info.mimeType, stream: body }, snapshot);
      // Settled below; this keeps an early rejection from counting as unhandled meanwhile.
      result.catch(() => undefined);
      files.push({ file, result });
    });

    for (const event of ['partsLimit', 'filesLimit', 'fieldsLimit'] as const) parser.on(event, () => void (overLimit = true));

    parser.on('error', (err) => {
      req.unpipe(parser);
      req.resume();
      reject(new ServiceError('invalid_request', `The form could not be read (${err instanceof Error ? err.message : 'malformed'}). Reload the page and try again.`));
    });

    parser.on('close', () => {
      void Promise.all(files.map(async ({ file, result }) => ({ ...file, result: (await Promise.allSettled([result]))[0]! }))).then((settled) =>
        resolve({ accepted: state === 'accepted', fields: state === 'accepted' ? fields : {}, files: settled, overLimit }),
      );
    });

    req.pipe(parser);
  });
}
