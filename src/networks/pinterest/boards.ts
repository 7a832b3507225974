import type { NetworkFailure } from '../adapter.js';
import { list, obj, str } from '../kit/json.js';
import type { NetworkDeps } from '../network-deps.js';
import { bodyOf, unexpected, v5 } from './api.js';

/** The board a new connection publishes to, when the user has none we can post on. */
export const DEFAULT_BOARD_NAME = 'Published';
/** GET /v5/boards returns up to 250 boards a page; the first page is enough to find one. */
const PAGE_SIZE = 250;

export interface Board {
  id: string;
  name: string;
}

type Io = { deps: NetworkDeps; base: string; token: string };

/** The boards a connection may publish to (see chooseBoard), with their owner's username, in Pinterest's order. */
export async function usableBoards(io: Io): Promise<{ ok: true; boards: (Board & { owner: string | null })[] } | NetworkFailure> {
  const listed = await v5(io, 'GET', `/boards?page_size=${PAGE_SIZE}`);
  if (!listed.ok) return listed.failure;
  const boards = list(bodyOf(listed).items)
    .map(obj)
    .filter((b) => str(b.id) !== null && str(b.name) !== null && (b.privacy === undefined || b.privacy === 'PUBLIC') && b.is_ads_only !== true)
    .map((b) => ({ id: str(b.id) ?? '', name: str(b.name) ?? '', owner: str(obj(b.owner).username) }));
  return { ok: true, boards };
}

/**
 * The board a connection publishes to (chosen at connect; the user may choose another later). GET /v5/boards lists the user's boards and the
 * group boards they collaborate on; with `boards:read` (not `boards:read_secret`) secret boards are not listed.
 * Only a PUBLIC board that is not ad-only fits `pins:write` (public pins); the user's own boards come before
 * group boards. With none, one is created (POST /v5/boards, `boards:write`).
 */
export async function chooseBoard(io: Io, username: string): Promise<{ ok: true; board: Board } | NetworkFailure> {
  const listed = await usableBoards(io);
  if (!listed.ok) return listed;
  const own = listed.boards.find((b) => b.owner === username) ?? listed.boards[0];
  if (own) return { ok: true, board: { id: own.id, name: own.name } };

  const made = await v5(io, 'POST', '/boards', { name: DEFAULT_BOARD_NAME, privacy: 'PUBLIC' });
  if (!made.ok) return made.failure;
  const board = bodyOf(made);
  const id = str(board.id);
  if (!id) return unexpected(io.deps, 'POST /v5/boards without id');
  return { ok: true, board: { id, name: str(board.name) ?? DEFAULT_BOARD_NAME } };
}
