import type { NetworkAdapter, PublishRequest, Published, Submitted } from '../../src/networks/adapter.js';
import type { NetworkDeps } from '../../src/networks/network-deps.js';
import { bufferSource } from '../../src/networks/media-source.js';
import { withinDeadline } from '../../src/outbound/deadline.js';

/**
 * What every network adapter test drives an adapter with: a job as the worker keeps it (progress saved between
 * calls, a lease that can be lost), injected effects with a controlled clock, and the worker's submit → publish
 * loop. One copy for all networks, so a change in how the worker drives adapters changes every test at once.
 */

/** A logged line of an adapter (raw network text goes only there). */
export interface LogLine {
  message: string;
  details: Record<string, unknown>;
}

/**
 * What the harness needs from a test: its clock and log capture, and optionally the bytes behind each media
 * address. `media` is asked when the adapter opens a file, not when the effects are built, so a test may swap a
 * file under an adapter it already made; throwing there is how a test says the address does not exist.
 */
export interface TestNetworkEnv {
  now: () => number;
  logs: LogLine[];
  media?: (url: string) => Buffer;
}

/** Effects for an adapter under test: real fetch to the local fake, the test's clock, no real sleeping. */
export function testNetworkDeps(env: TestNetworkEnv, over: Partial<NetworkDeps> = {}): NetworkDeps {
  const media = env.media ?? (() => Buffer.from('0123456789'));
  return {
    fetch: globalThis.fetch,
    userHostFetch: globalThis.fetch,
    now: env.now,
    sleep: async () => {},
    log: (message, details) => void env.logs.push({ message, details }),
    openMedia: async (url) => bufferSource(media(url)),
    ...over,
  };
}

/** A fetch whose every request gives up after `ms` (fakes hang on purpose to lose an answer). */
export function impatientFetch(ms = 300): typeof fetch {
  return (input, init) => withinDeadline(ms, (signal) => globalThis.fetch(input, { ...init, signal }), init?.signal ?? undefined);
}

/**
 * One job as the worker keeps it: progress saved durably between calls (each save kept in `saves`); `leaseHeld`
 * false makes saves fail. `base` gives the network's own fields and is read on every request, so a value the fake
 * changes during a test (a renewed token) is the one sent.
 */
export class NetworkJob {
  progress: Record<string, unknown> | null = null;
  saves: Record<string, unknown>[] = [];
  leaseHeld = true;
  constructor(private readonly base: () => Partial<PublishRequest> & Pick<PublishRequest, 'platform' | 'credentials'>) {}
  request(over: Partial<PublishRequest> = {}): PublishRequest {
    return {
      jobId: 'job_1',
      attempt: 1,
      connection: { id: 'conn_1', mode: 'live', name: '@account' },
      contentType: 'text',
      text: 'Hello',
      title: null,
      thread: null,
      media: [],
      sandboxOutcome: null,
      progress: this.progress,
      saveProgress: async (p) => {
        if (!this.leaseHeld) return false;
        this.progress = structuredClone(p);
        this.saves.push(this.progress);
        return true;
      },
      ...this.base(),
      ...over,
    };
  }
}

/** For tests about what follows submit: a refused submit fails the test, with the code and our words. */
export async function submitOk(adapter: NetworkAdapter, job: NetworkJob): Promise<string> {
  const s: Submitted = await adapter.submit(job.request());
  if (!s.ok) throw new Error(`submit failed: ${s.code} ${s.message}`);
  return s.containerId;
}

export interface DriveOptions {
  /** Pending answers tolerated before the test fails: an adapter that never settles must not hang the suite. */
  maxPendings?: number;
  /**
   * A failed submit throws instead of being returned, for tests that expect any failure to come from publish:
   * otherwise a submit refusing for another reason could pass an assertion meant for the publish step.
   */
  submitMustSucceed?: boolean;
}

/** Submit, then publish until it is no longer pending (as the worker would, later each time). */
export async function drive(adapter: NetworkAdapter, job: NetworkJob, options: DriveOptions = {}): Promise<{ result: Published; pendings: number }> {
  const { maxPendings = 10, submitMustSucceed = false } = options;
  let containerId: string;
  if (submitMustSucceed) {
    containerId = await submitOk(adapter, job);
  } else {
    const s = await adapter.submit(job.request());
    if (!s.ok) return { result: s, pendings: 0 };
    containerId = s.containerId;
  }
  let pendings = 0;
  for (;;) {
    const result = await adapter.publish(job.request(), containerId);
    if (result.ok !== 'pending') return { result, pendings };
    pendings++;
    if (pendings > maxPendings) throw new Error('still pending');
  }
}
