import { chooseTargetInputSchema, type Connection, type PublishTargetList } from '../../core/connections/connections.schema.js';
import { ServiceError } from '../../core/errors.js';
import { html } from '../../web/html.js';
import { PLATFORMS } from '../../vocabulary/platforms.js';
import { explainServiceError, platformName } from '../explain.js';
import { check, type FieldErrors, fieldErrorsOf } from '../forms.js';
import { csrfField, errorBanner } from '../layout.js';
import type { PageContext, PageResult, PageRouter } from '../page-router.js';

const BRANDS_URL = '/dashboard/brands';
const GONE_CONNECTION = 'That connection was not found in this workspace; it may have been removed.';

export const boardUrl = (connectionId: string) => `/dashboard/connections/${encodeURIComponent(connectionId)}/board`;

/**
 * Whether the Brands page offers a board choice for this connection. The core decides what can really be chosen
 * (a refusal shows on the board page); this only keeps the link off connections that never have one.
 */
export function choosesBoard(connection: Pick<Connection, 'platform_slug' | 'mode' | 'status'>): boolean {
  return connection.mode === 'live' && connection.status === 'active' && PLATFORMS[connection.platform_slug].kind === 'pin-board';
}

/** The board in a pin-board connection's name, which the network adapter writes as `username · board`. */
export function boardOf(connection: Pick<Connection, 'name'>): string | null {
  const at = connection.name.indexOf(' · ');
  return at < 0 ? null : connection.name.slice(at + ' · '.length);
}

interface BoardFormState {
  status: number;
  errors?: FieldErrors;
  banner?: string;
  /** The board sent, kept chosen when the form comes back. */
  chosen?: string;
}

/** A live Pinterest connection's board (the core's targets and chooseTarget, as GET …/targets and PUT …/target). */
export function connectionBoardPages(pages: PageRouter): void {
  async function render(ctx: PageContext, conn: Connection, state: BoardFormState = { status: 200 }): Promise<PageResult> {
    const network = platformName(conn.platform_slug);
    let boards: PublishTargetList['data'] = [];
    let listed: { message: string; status: number } | null = null;
    try {
      boards = (await ctx.deps.services.networkConnect.targets(ctx.principal, ctx.workspaceId, conn.id)).data;
    } catch (err) {
      if (!(err instanceof ServiceError) || err.code === 'not_found') throw err;
      listed = { message: explainServiceError(err), status: err.status };
    }
    const chosen = state.chosen ?? boards.find((b) => b.current)?.id;
    const choiceError = state.errors?.target_id;
    const other = Object.entries(state.errors ?? {}).filter(([path]) => path !== 'target_id');
    const banner = state.banner ?? (other.length > 0 ? other.map(([p, m]) => (p === '_' ? m : `${p}: ${m}`)).join(' ') : undefined);
    const current = boards.find((b) => b.current)?.name ?? boardOf(conn);

    return {
      title: `Board of ${conn.name}`,
      active: 'brands',
      // A page whose list could not be read answers the refusal's status, as a refused form does.
      status: state.status !== 200 ? state.status : (listed?.status ?? 200),
      body: html`<h1>Choose the board of ${conn.name}</h1>
<p><a href="${BRANDS_URL}">Brands & connections</a></p>
${errorBanner(banner)}
${errorBanner(listed?.message === banner ? null : listed?.message, html`<p><a href="${boardUrl(conn.id)}">Try again</a> or go back to <a href="${BRANDS_URL}">Brands & connections</a>.</p>`)}
<section class="card" aria-labelledby="board-h">
  <h2 id="board-h">Board on ${network}</h2>
  <p>Current board: <strong id="current-board">${current ?? 'unknown'}</strong></p>
  ${
    listed !== null
      ? ''
      : boards.length === 0
        ? html`<p class="empty">${network} lists no public board this account can pin to. Make one on ${network}, then <a href="${boardUrl(conn.id)}">reload this page</a>.</p>`
        : html`<form method="post" action="${boardUrl(conn.id)}">
    ${csrfField(ctx.csrf)}
    <fieldset class="field${choiceError ? ' invalid' : ''}" aria-describedby="board-hint${choiceError ? ' board-error' : ''}">
      <legend>Board</legend>
      <p class="hint" id="board-hint">Only public boards that are not ad-only are listed: pins published from here are public. Posts not yet published go to the board you choose.</p>
      ${boards.map(
        (b, i) => html`<div class="field check">
        <input type="radio" id="board-${i}" name="target_id" value="${b.id}"${b.id === chosen ? html` checked` : ''}${choiceError ? html` aria-invalid="true"` : ''}>
        <label for="board-${i}">${b.name}${b.current ? ' (current)' : ''}</label>
      </div>`,
      )}
      ${choiceError ? html`<p class="field-error" id="board-error">${choiceError}</p>` : ''}
    </fieldset>
    <button type="submit" class="primary">Use this board</button>
  </form>`
  }
</section>`,
    };
  }

  pages.page('/dashboard/connections/:connId/board', async (ctx) => {
    try {
      const conn = await ctx.deps.services.connections.get(ctx.principal, ctx.workspaceId, ctx.params.connId!);
      return await render(ctx, conn);
    } catch (err) {
      if (err instanceof ServiceError && err.code === 'not_found') return { redirect: BRANDS_URL, flash: GONE_CONNECTION };
      throw err;
    }
  });

  pages.action('/dashboard/connections/:connId/board', async (ctx) => {
    const { services } = ctx.deps;
    const targetId = ctx.form.get('target_id');
    try {
      const conn = await services.connections.get(ctx.principal, ctx.workspaceId, ctx.params.connId!);
      // The schema's own words for an empty value speak of characters; a radio group asks for a choice.
      if (targetId.trim() === '') return render(ctx, conn, { status: 400, errors: { target_id: 'Choose a board.' } });
      const input = check(chooseTargetInputSchema, { target_id: targetId });
      if (!input.ok) return render(ctx, conn, { status: 400, errors: input.errors, chosen: targetId });
      try {
        const moved = await services.networkConnect.chooseTarget(ctx.principal, ctx.workspaceId, conn.id, input.data.target_id);
        const board = boardOf(moved);
        return { redirect: BRANDS_URL, flash: board === null ? `“${moved.name}” now publishes to the board you chose.` : `“${moved.name}” now pins to the board “${board}”.` };
      } catch (err) {
        if (!(err instanceof ServiceError) || err.code === 'not_found') throw err;
        const fields = fieldErrorsOf(err);
        if (fields?.target_id !== undefined) return render(ctx, conn, { status: err.status, errors: fields, chosen: targetId });
        return render(ctx, conn, { status: err.status, banner: explainServiceError(err), chosen: targetId });
      }
    } catch (err) {
      if (err instanceof ServiceError && err.code === 'not_found') return { redirect: BRANDS_URL, flash: GONE_CONNECTION };
      throw err;
    }
  });
}
