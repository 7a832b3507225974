import { z } from 'zod';
import { ServiceError } from '../../core/errors.js';
import type { HealthService } from '../../core/health.js';
import { defineRoute } from '../route.js';

const statusSchema = z
  .object({ status: z.enum(['ok']), database: z.enum(['ok']).optional() })
  .meta({ id: 'HealthStatus' });

export function systemRoutes(health: HealthService) {
  return [
    defineRoute({
      operationId: 'healthz',
      method: 'get',
      path: '/healthz',
      tag: 'Operations',
      summary: 'Liveness',
      description: 'Answers 200 while the process serves requests.',
      auth: 'none',
      success: { status: 200, description: 'Alive.', schema: statusSchema },
      handle: async () => ({ status: 'ok' as const }),
    }),
    defineRoute({
      operationId: 'readyz',
      method: 'get',
      path: '/readyz',
      tag: 'Operations',
      summary: 'Readiness',
      description:
        'Answers 200 when the database answers within 2 s and writes are not failing (SQLite: no full disk or I/O error in the last 30 s); 500 server_error otherwise, its message saying which.',
      auth: 'none',
      success: { status: 200, description: 'Ready.', schema: statusSchema },
      handle: async () => {
        const why = await health.unreadiness();
        if (why !== null) throw new ServiceError('server_error', why);
        return { status: 'ok' as const, database: 'ok' as const };
      },
    }),
  ];
}
