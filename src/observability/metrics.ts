import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * Prometheus metrics (prom-client). One registry per process; the queue gauges are read from the database when
 * scraped, so every process reports the shared queues.
 */
export function createMetrics(
  queueStats: () => Promise<{ dueJobs: number; oldestJobAgeSeconds: number; pendingDeliveries: number; oldestDeliveryAgeSeconds: number; overdueScheduled: number }>,
) {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });

  const requests = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP requests by route template, method and status.',
    labelNames: ['route', 'method', 'status'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  const jobOutcomes = new Counter({
    name: 'publish_job_outcomes_total',
    help: 'Jobs that reached a final state, by platform, status and error code.',
    labelNames: ['platform', 'status', 'code'],
    registers: [registry],
  });
  const deliveries = new Counter({
    name: 'webhook_delivery_attempts_total',
    help: 'Webhook delivery attempts by resulting delivery status.',
    labelNames: ['status'],
    registers: [registry],
  });
  const scheduled = new Counter({
    name: 'scheduled_contents_total',
    help: 'Scheduled contents handled at their time, by outcome (started, missed, unpaid, retry).',
    labelNames: ['outcome'],
    registers: [registry],
  });
  const lateness = new Histogram({
    name: 'scheduled_start_lateness_seconds',
    help: 'How long after its publish_at a scheduled content started publishing.',
    buckets: [0.1, 0.5, 1, 5, 15, 30, 60, 300, 3600],
    registers: [registry],
  });
  const stat = (name: string, help: string, pick: (s: Awaited<ReturnType<typeof queueStats>>) => number) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      async collect() {
        this.set(pick(await queueStats()));
      },
    });
  stat('publish_jobs_due', 'Jobs due and not yet finished.', (s) => s.dueJobs);
  stat('publish_jobs_oldest_due_age_seconds', 'Age of the oldest due job.', (s) => s.oldestJobAgeSeconds);
  // Should stay at 0: a scheduled content past its time that nobody started is a silent miss in the making.
  stat('scheduled_contents_overdue', 'Scheduled contents whose publish_at has passed and that have not started.', (s) => s.overdueScheduled);
  stat('webhook_deliveries_pending', 'Deliveries waiting for an attempt.', (s) => s.pendingDeliveries);
  stat('webhook_deliveries_oldest_pending_age_seconds', 'Age of the oldest due delivery.', (s) => s.oldestDeliveryAgeSeconds);

  return {
    registry,
    observeRequest(route: string, method: string, status: number, seconds: number): void {
      requests.observe({ route, method, status: String(status) }, seconds);
    },
    jobFinished(platform: string, status: string, code: string | null): void {
      jobOutcomes.inc({ platform, status, code: code ?? 'none' });
    },
    deliveryAttempted(status: string): void {
      deliveries.inc({ status });
    },
    scheduledHandled(outcome: string, latenessMs: number | null): void {
      scheduled.inc({ outcome });
      if (latenessMs !== null) lateness.observe(Math.max(0, latenessMs) / 1000);
    },
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
