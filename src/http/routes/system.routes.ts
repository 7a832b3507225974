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
      description: 'Answers 200 when the database is reachable, 500 server_error otherwise.',
      auth: 'none',
      success: { status: 200, description: 'Ready.', schema: statusSchema },
      handle: async () => {
        if (!(await health.databaseReachable())) throw new ServiceError('server_error', 'The database is not reachable.');
        return { status: 'ok' as const, database: 'ok' as const };
      },
    }),
  ];
}
