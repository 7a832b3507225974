import { type Logger, pino } from 'pino';

export type { Logger };

/**
 * JSON logs. Anything that may carry a credential is redacted at the logger, so a careless log line cannot
 * leak one.
 */
export function createLogger(level: string, destination?: NodeJS.WritableStream): Logger {
  const options = {
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
  return destination ? pino(options, destination as pino.DestinationStream) : pino(options);
}
