import { type Logger, type LoggerOptions, pino } from 'pino';
import pretty from 'pino-pretty';

export type { Logger };

/** `json`: one JSON object a line (machines, CI, tests); `pretty`: one readable line per request (a terminal). */
export type LogFormat = 'json' | 'pretty';

/** The fields of the access-log line that `requestContext` writes (src/web/request-context.ts). */
interface RequestLine {
  method: string;
  path: string;
  status: number;
  ms: number;
}

function isRequestLine(o: Record<string, unknown>): o is Record<string, unknown> & RequestLine {
  return typeof o.method === 'string' && typeof o.path === 'string' && typeof o.status === 'number' && typeof o.ms === 'number';
}

/**
 * Human-readable lines for a terminal: `12:03:04 INFO: GET /api/v1/me → 200 (2.1 ms) [req_…]`. The access-log
 * fields are folded into the message (and out of the object pino-pretty would print below it), so a request
 * costs one line; other fields of other lines still follow, indented.
 */
function prettyOptions(destination: NodeJS.WritableStream | undefined): Pick<LoggerOptions, 'formatters'> & { stream: pino.DestinationStream } {
  return {
    // Moved under one key that pino-pretty is told to skip, instead of mutating what it prints.
    formatters: {
      log: (o) => {
        if (!isRequestLine(o)) return o;
        const { method, path, status, ms, ...rest } = o;
        return { ...rest, request: { method, path, status, ms } };
      },
    },
    stream: pretty({
      sync: true,
      destination: destination ?? 1,
      translateTime: 'SYS:HH:MM:ss',
      ignore: 'pid,hostname,service,request,request_id',
      messageFormat: (log, messageKey) => {
        const request = log.request as RequestLine | undefined;
        const text = request ? `${request.method} ${request.path} → ${request.status} (${request.ms.toFixed(1)} ms)` : String(log[messageKey] ?? '');
        return typeof log.request_id === 'string' ? `${text} [${log.request_id}]` : text;
      },
    }),
  };
}

/**
 * The service's logger. Anything that may carry a credential is redacted at the logger, so a careless log line
 * cannot leak one. Without a destination it writes to stdout: `pretty` when stdout is a terminal, JSON
 * otherwise (pipes, files, CI, tests), unless `format` says which.
 */
export function createLogger(level: string, destination?: NodeJS.WritableStream, format?: LogFormat): Logger {
  const options: LoggerOptions = {
    level,
    base: { service: 'publisher' },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: {
      paths: [
        'authorization',
        'headers.authorization',
        'req.headers.authorization',
        'req.headers.cookie',
        '*.api_key',
        '*.secret',
        '*.client_secret',
        '*.access_token',
        '*.token',
        'api_key',
        'secret',
        'client_secret',
      ],
      censor: '[redacted]',
    },
  };
  const chosen = format ?? (destination === undefined && process.stdout.isTTY ? 'pretty' : 'json');
  if (chosen === 'pretty') {
    const { formatters, stream } = prettyOptions(destination);
    return pino({ ...options, formatters }, stream);
  }
  return destination ? pino(options, destination as pino.DestinationStream) : pino(options);
}
