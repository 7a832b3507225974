/**
 * One fuzz case (a request, as data, before it is sent) and what the generators need to build cases for one
 * operation.
 */
import type fc from 'fast-check';
import type { GenContext } from './arbitraries.js';
import type { Operation } from './document.js';

/** A path parameter; `raw` ones go into the URL as they are (to send malformed percent-escapes and dot segments). */
export interface PathValue {
  value: string;
  raw?: boolean;
}

export type Body =
  | { kind: 'json'; value: unknown }
  | { kind: 'text'; text: string }
  | { kind: 'bytes'; bytes: Uint8Array }
  /** Sent with Transfer-Encoding: chunked (no Content-Length). */
  | { kind: 'stream'; chunks: Uint8Array[] };

export interface FuzzCase {
  /** `family:detail`, e.g. `body:type-swap` — failures are grouped by family. */
  label: string;
  pathParams: Record<string, PathValue>;
  /** Without the `?`; sent as is (the URL parser still percent-encodes what it must). */
  query: string;
  /** Lower-case names. An `authorization` here replaces the API key. */
  headers: Record<string, string>;
  /** Omit the credential. */
  anonymous?: boolean;
  body?: Body;
  /** undefined: application/json for JSON and text bodies, the first raw type for byte bodies; null: none. */
  contentType?: string | null;
  /**
   * The request breaks HTTP itself (e.g. headers over Node's 16 KB limit): Node's parser may answer before the
   * application, without a request id. Such answers are accepted as long as they are 4xx and the server lives.
   */
  transport?: boolean;
  /** The request names another workspace's object or brings another workspace's key: it must not succeed. */
  crossTenant?: boolean;
}

export interface CaseContext extends GenContext {
  op: Operation;
  /** Real ids by path parameter name; the first valid-looking inputs use them. */
  ids: Readonly<Record<string, readonly string[]>>;
  /** Ids that exist but are wrong here: another workspace's, another kind's. */
  foreignIds: readonly string[];
  /** Those of `foreignIds` that belong to another workspace (a 2xx naming them is a broken isolation). */
  otherTenantIds?: readonly string[];
  /** A valid credential of another workspace (answers must be 403, not data). */
  foreignAuthorization?: string;
  /** Known-good JSON bodies (coherent beyond what the schema says), mixed with the schema-generated ones. */
  bodies?: fc.Arbitrary<unknown>;
}

/** One family of hostile variants of a valid case. */
export type Mutation = fc.Arbitrary<FuzzCase>;
