/**
 * What makes one answer acceptable: never a 5xx or a 3xx, tenant isolation, a plain X-Request-Id, the spec error
 * body with a code of the catalogue, and the documented status and schema.
 */
import type { ResponseConformance } from '../openapi.js';
import type { FuzzCase } from './case.js';
import type { Operation } from './document.js';
import { isObject } from './json-path.js';
import type { Answer } from './send.js';

export interface JudgeContext {
  conformance: ResponseConformance;
  errorCodes: ReadonlySet<string>;
}

/** Problems with one answer (empty when it is acceptable). */
export function judge(op: Operation, c: FuzzCase, a: Answer, ctx: JudgeContext): string[] {
  const problems: string[] = [];
  if (a.status >= 500) problems.push(`answered ${a.status}`);
  else if (a.status < 200 || (a.status >= 300 && a.status < 400)) problems.push(`answered ${a.status}, neither 2xx nor 4xx`);
  if (c.crossTenant === true && a.status >= 200 && a.status < 300) problems.push(`another workspace's object or key answered ${a.status} (tenant isolation)`);
  const rid = a.headers.get('x-request-id');
  if (rid === null) {
    // Node's own parser answers a request that breaks HTTP before the application sees it.
    if (c.transport === true && a.status >= 400 && a.status < 500) return problems;
    problems.push('no X-Request-Id header');
  } else if (!/^[\x21-\x7e]{1,128}$/.test(rid)) {
    problems.push(`X-Request-Id ${JSON.stringify(rid.slice(0, 60))} is not plain`);
  }
  const sent = c.headers['x-request-id'];
  if (sent !== undefined && rid === sent && !/^[\x21-\x7e]{1,128}$/.test(sent)) problems.push('an unsafe X-Request-Id was reflected');
  if (a.status >= 400) {
    if (!(a.headers.get('content-type') ?? '').startsWith('application/json')) problems.push(`error answer with content-type ${a.headers.get('content-type')}`);
    const body = a.json;
    if (!isObject(body)) problems.push(`error body is not a JSON object: ${a.text.slice(0, 120)}`);
    else {
      if (typeof body.error !== 'string' || !ctx.errorCodes.has(body.error)) problems.push(`error code ${JSON.stringify(body.error)} is not in the catalogue`);
      if (typeof body.message !== 'string' || body.message.length === 0) problems.push('error message missing');
      if (typeof body.request_id !== 'string' || body.request_id !== rid) problems.push(`request_id ${JSON.stringify(body.request_id)} differs from X-Request-Id ${JSON.stringify(rid)}`);
    }
  }
  // A request the HTTP parser refuses never reaches the operation: its answer (431, 400) is in the error shape
  // checked above and documented once for the whole API, not per operation.
  if (c.transport === true && a.status >= 400 && a.status < 500) return problems;
  // The documented statuses and schemas apply when the URL still names this operation (a dot segment in a path
  // parameter, for instance, is resolved away by the URL parser and lands elsewhere).
  const pathname = new URL(a.url).pathname;
  if (ctx.conformance.templateFor(pathname) === op.path && (a.status < 300 || a.status >= 400)) {
    const found = ctx.conformance.check(op.method, pathname, a.status, a.json);
    problems.push(...found.map((p) => (p.length > 300 ? `${p.slice(0, 300)}…` : p)));
  }
  return problems;
}
