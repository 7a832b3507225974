import { ServiceError } from '../../core/errors.js';
import { OPERATION_METER } from '../../core/wallet/prices.js';
import { type Price, priceQuerySchema, type Statement, statementQuerySchema } from '../../core/wallet/wallet.schema.js';
import { explainServiceError } from '../explain.js';
import { check, fieldErrorsOf } from '../forms.js';
import { html, type SafeHtml } from '../../web/html.js';
import { badge, csrfField, describedBy, errorBanner, field, isoDate, number, table } from '../layout.js';
import type { PageContext, PageRouter } from '../page-router.js';
import { newId } from '../../core/ids.js';
import { meterExplanation, meterWord, operationWord, price as englishPrice } from '../words.js';
import type { Usage } from '../../core/meters/meters.schema.js';

const WALLET = '/dashboard/wallet';
/** The sandbox checkout: under /dashboard, where the session cookie is sent. */
const CHECKOUT = '/dashboard/pay';

/** The operations the core charges for; the price form offers exactly these. */
const PRICED_OPERATIONS = Object.keys(OPERATION_METER);

const KIND_WORDS: Record<Statement['ledger']['data'][number]['kind'], string> = {
  grant: 'Credits added',
  spend: 'Credits spent',
  refund: 'Refund',
  expiry: 'Expired',
};
const SOURCE_WORDS: Record<Statement['lotes'][number]['source'], string> = { purchase: 'Purchase', grant: 'Grant', promotion: 'Promotion' };

function signed(amount: number): string {
  return amount > 0 ? `+${number(amount)}` : number(amount);
}

/** A package's price in its configured currency, as the English page writes it ("BRL 49.00"). */
function money(amount: number, currency: string): string {
  return englishPrice(amount, currency);
}

type LedgerEntry = Statement['ledger']['data'][number];
type BatchSource = Statement['lotes'][number]['source'];

/**
 * What a ledger entry was for, in words: the stored reference is a payment event, a content or a job id, which
 * means nothing to a person. A spend links to its post; a purchase says how many credits it bought.
 */
function ledgerDetails(entry: LedgerEntry, sources: ReadonlyMap<string, BatchSource>): SafeHtml | string {
  switch (entry.kind) {
    case 'grant': {
      // The batch's source says how the credits came; a batch no longer listed falls back on the reference's form.
      const source = sources.get(entry.batch_id) ?? (entry.reference?.startsWith('payment:') ? 'purchase' : 'grant');
      if (source === 'purchase') return `Purchase of ${number(entry.amount)} credits`;
      return source === 'promotion' ? `Promotion: ${number(entry.amount)} credits` : `${number(entry.amount)} credits granted by the operator`;
    }
    case 'spend':
      return entry.reference ? html`Paid for <a href="/dashboard/contents/${encodeURIComponent(entry.reference)}">a post</a>` : 'Paid for a post';
    case 'refund':
      return 'Given back: a publication paid in credits did not go out';
    case 'expiry':
      return 'The unused credits of a batch expired';
  }
}

const DAY = new Intl.DateTimeFormat('en-GB', { day: 'numeric', month: 'long', year: 'numeric', timeZone: 'UTC' });

/** The plan's per-cycle meters, each with what it counts and when the count starts again. */
function planSection(usage: Usage): SafeHtml {
  const rows = usage.meters
    .filter((m) => m.kind === 'cycle')
    .map(
      (m) => html`<tr>
  <th scope="row">${meterWord(m.meter)}</th>
  <td>${number(m.used)} of ${number(m.limit)}</td>
  <td>${meterExplanation(m.meter) ?? ''}</td>
</tr>`,
    );
  return html`<section class="card" aria-labelledby="plan-h">
  <h2 id="plan-h">Your plan this cycle</h2>
  <p>Posts paid with Plan use this allowance. When it runs out, Plan refuses the post and Plan, then credits pays the rest in credits. The cycle is the calendar month: both counts start again from zero on ${DAY.format(new Date(usage.cycle_end))} at 00:00 UTC.</p>
  ${table({ caption: 'Plan allowance this cycle', head: ['Allowance', 'Used', 'What counts'], rows, empty: 'No allowance.' })}
</section>`;
}

/** What the statement query asked for: the ledger page, or a message when the address holds values we cannot use. */
async function loadStatement(ctx: PageContext): Promise<{ statement: Statement; error: string | null; limit: string | undefined }> {
  const asked = {
    ...(ctx.query.limit !== undefined ? { limit: ctx.query.limit } : {}),
    ...(ctx.query.cursor !== undefined ? { cursor: ctx.query.cursor } : {}),
  };
  const wallet = ctx.deps.services.wallet;
  const fallback = () => wallet.statement(ctx.principal, ctx.workspaceId, { limit: 50 });
  const checked = check(statementQuerySchema, asked);
  if (!checked.ok) {
    const message = checked.errors.limit !== undefined ? 'The page size in the address must be a whole number from 1 to 200.' : 'The ledger position in the address is not one this page gave out.';
    return { statement: await fallback(), error: `${message} Showing the newest entries instead.`, limit: undefined };
  }
  try {
    return { statement: await wallet.statement(ctx.principal, ctx.workspaceId, checked.data), error: null, limit: asked.limit };
  } catch (err) {
    // A cursor that decodes to nothing valid: the core says validation_failed.
    if (fieldErrorsOf(err) === null) throw err;
    return { statement: await fallback(), error: 'The ledger position in the address is not one this page gave out. Showing the newest entries instead.', limit: undefined };
  }
}

type PriceOutcome = { kind: 'none' } | { kind: 'invalid'; operation?: string; quantity?: string } | { kind: 'refused'; message: string } | { kind: 'priced'; price: Price };

/** The price form's answer, when the address carries one. */
async function loadPrice(ctx: PageContext): Promise<PriceOutcome> {
  const { operation, quantity } = ctx.query;
  if (operation === undefined && quantity === undefined) return { kind: 'none' };
  const checked = check(priceQuerySchema, { operacao: operation ?? '', ...(quantity !== undefined ? { quantidade: quantity } : {}) });
  if (!checked.ok) {
    return {
      kind: 'invalid',
      ...(checked.errors.operacao !== undefined ? { operation: 'Choose an operation.' } : {}),
      ...(checked.errors.quantidade !== undefined ? { quantity: 'Enter a whole number from 1 to 100,000.' } : {}),
    };
  }
  try {
    return { kind: 'priced', price: await ctx.deps.services.wallet.price(ctx.principal, ctx.workspaceId, checked.data) };
  } catch (err) {
    if (err instanceof ServiceError && err.code === 'operacao_sem_preco') return { kind: 'refused', message: explainServiceError(err) };
    throw err;
  }
}

function priceResult(price: Price): SafeHtml {
  const coverage = price.coberto_pelo_plano
    ? 'Your plan still covers this quantity this cycle: paid with Plan (or Plan, then credits) it costs no credits. Only paying with Credits spends them.'
    : 'Your plan does not cover this quantity for the rest of this cycle: it would be paid in credits (Credits, or Plan, then credits).';
  // Short of credits matters only when credits would be spent: not while the plan covers it.
  const short = !price.coberto_pelo_plano && price.custo_estimado > price.saldo_disponivel;
  return html`<h3 id="price-result-h">${number(price.quantidade)} × ${operationWord(price.operacao)}</h3>
<dl>
  <dt>Price per unit</dt><dd>${number(price.preco_unitario)} credits</dd>
  <dt>Estimated cost</dt><dd>${number(price.custo_estimado)} credits</dd>
  <dt>Available balance</dt><dd>${number(price.saldo_disponivel)} credits</dd>
  <dt>Covered by the plan</dt><dd>${price.coberto_pelo_plano ? 'Yes' : 'No'}</dd>
</dl>
<p>${coverage}</p>
${short ? html`<p class="warn">Your balance does not cover this cost in credits: buy credits below.</p>` : ''}`;
}

function priceForm(ctx: PageContext, outcome: PriceOutcome): SafeHtml {
  const opError = outcome.kind === 'invalid' ? outcome.operation : undefined;
  const qtyError = outcome.kind === 'invalid' ? outcome.quantity : undefined;
  const chosen = ctx.query.operation ?? PRICED_OPERATIONS[0];
  const quantity = ctx.query.quantity ?? '1';
  return html`<section class="card" aria-labelledby="price-h">
  <h2 id="price-h">Price of an operation</h2>
  <p>What an operation costs in credits now, before you publish paying with Credits or Plan, then credits.</p>
  <form method="get" action="${WALLET}">
    ${field({
      id: 'price-operation',
      label: 'Operation',
      error: opError,
      control: html`<select id="price-operation" name="operation"${describedBy('price-operation', { error: opError })}>${PRICED_OPERATIONS.map(
        (op) => html`<option value="${op}"${op === chosen ? html` selected` : ''}>${operationWord(op)}</option>`,
      )}</select>`,
    })}
    ${field({
      id: 'price-quantity',
      label: 'Quantity',
      hint: 'From 1 to 100,000.',
      error: qtyError,
      control: html`<input id="price-quantity" name="quantity" type="number" min="1" max="100000" step="1" required value="${quantity}"${describedBy('price-quantity', { hint: true, error: qtyError })}>`,
    })}
    <button type="submit">Check price</button>
  </form>
  ${outcome.kind === 'refused' ? errorBanner(outcome.message) : ''}
  ${outcome.kind === 'priced' ? priceResult(outcome.price) : ''}
</section>`;
}

/** The wallet (spec 4.5): balance, batches, ledger, offers and the price of an operation. */
export function walletPages(pages: PageRouter): void {
  pages.page(WALLET, async (ctx) => {
    const [{ statement, error, limit }, outcome, offers, usage] = await Promise.all([
      loadStatement(ctx),
      loadPrice(ctx),
      ctx.deps.services.wallet.offers(ctx.principal, ctx.workspaceId),
      ctx.deps.services.meters.usage(ctx.workspaceId),
    ]);
    const status = error !== null || outcome.kind === 'invalid' ? 400 : outcome.kind === 'refused' ? 402 : 200;
    const sandbox = ctx.deps.sandboxCheckout !== null;

    const batchRows = statement.lotes.map(
      (b) => html`<tr>
  <td>${SOURCE_WORDS[b.source]}</td>
  <td>${number(b.amount)}</td>
  <td>${number(b.remaining)}</td>
  <td>${isoDate(b.created_at)}</td>
  <td>${b.expires_at ? isoDate(b.expires_at) : 'never'}</td>
  <td>${b.expired ? badge('expired') : badge('active')}</td>
</tr>`,
    );
    const sources = new Map(statement.lotes.map((b) => [b.id, b.source]));
    const ledgerRows = statement.ledger.data.map(
      (l) => html`<tr>
  <td>${isoDate(l.created_at)}</td>
  <td>${KIND_WORDS[l.kind]}</td>
  <td>${signed(l.amount)}</td>
  <td>${l.operation ? operationWord(l.operation) : '—'}</td>
  <td>${ledgerDetails(l, sources)}</td>
</tr>`,
    );
    const next = statement.ledger.next_cursor;
    const older = next === null ? '' : `${WALLET}?${new URLSearchParams({ ...(limit !== undefined ? { limit } : {}), cursor: next }).toString()}#ledger-h`;
    const paged = ctx.query.cursor !== undefined && error === null;

    return {
      title: 'Wallet',
      active: 'wallet',
      status,
      body: html`<h1>Wallet</h1>
${errorBanner(error)}
<section class="card" aria-labelledby="balance-h">
  <h2 id="balance-h">Balance</h2>
  <p class="big">${number(statement.saldo)} <span class="unit">credits</span></p>
  <p class="muted">Credits pay for publications beyond your plan. Each charge comes from one batch, the one that expires soonest.</p>
</section>
${planSection(usage)}
${priceForm(ctx, outcome)}
<section class="card" aria-labelledby="offers-h">
  <h2 id="offers-h">Buy credits</h2>
  ${sandbox ? html`<p class="muted" id="sandbox-note">This installation has no payment provider yet, so buying opens a sandbox checkout: it adds the credits without any payment. The operator connects a real provider with <code>PAYMENT_URL_TEMPLATE</code>.</p>` : ''}
  ${table({
    caption: 'Credit packages',
    head: ['Credits', 'Price', 'Buy'],
    rows: offers.data.map(
      (o) => html`<tr>
  <td>${number(o.credits)}</td>
  <td>${money(o.price, o.currency)}</td>
  <td><a class="button" href="${o.payment_url}" rel="noopener noreferrer">Buy ${number(o.credits)} credits${sandbox ? ' (sandbox)' : ''}</a></td>
</tr>`,
    ),
    empty: 'No credit packages are on sale.',
  })}
</section>
<section class="card" aria-labelledby="batches-h">
  <h2 id="batches-h">Credit batches</h2>
  ${table({ caption: 'What remains of each batch', head: ['Source', 'Amount', 'Remaining', 'Created', 'Expires', 'Status'], rows: batchRows, empty: 'No credits yet.' })}
</section>
<section class="card" aria-labelledby="ledger-h">
  <h2 id="ledger-h">Ledger</h2>
  <p class="muted">Every change to the balance, newest first.</p>
  ${table({ caption: 'Ledger entries', head: ['When', 'What', 'Amount', 'Operation', 'Details'], rows: ledgerRows, empty: paged ? 'No older entries.' : 'No entries yet.' })}
  ${paged || older ? html`<p class="actions">${paged ? html`<a href="${WALLET}#ledger-h">Newest entries</a>` : ''}${older ? html`<a href="${older}">Older entries</a>` : ''}</p>` : ''}
</section>`,
    };
  });

  checkoutPages(pages);
}

/**
 * The built-in checkout at `/dashboard/pay`, the default PAYMENT_URL_TEMPLATE's address, so a payment link is never
 * a dead end: the offer and a "Pay (sandbox)" button granting its credits through the signed callback path. Without a sandbox (a real
 * provider is configured) the page says where buying happens instead of granting anything.
 */
function checkoutPages(pages: PageRouter): void {
  const unavailable = (ctx: PageContext) => ({
    title: 'Checkout',
    active: 'wallet' as const,
    status: 404,
    body: html`<section class="card narrow">
  <h1>No checkout here</h1>
  <p>This installation takes payments through its payment provider: use the Buy buttons of the wallet, which lead to it.</p>
  <p><a class="button" href="${WALLET}">Back to the wallet</a></p>
  <p class="muted">Reference: <code>${ctx.requestId}</code></p>
</section>`,
  });

  pages.page(CHECKOUT, async (ctx) => {
    const checkout = ctx.deps.sandboxCheckout;
    if (checkout === null) return unavailable(ctx);
    const workspace = ctx.query.workspace ?? ctx.workspaceId;
    if (workspace !== ctx.workspaceId) {
      return {
        title: 'Checkout',
        active: 'wallet',
        status: 403,
        body: html`<section class="card narrow">
  <h1>This checkout is for another workspace</h1>
  <p>The link buys credits for another workspace than the one you are signed in to, ${ctx.workspaceName}. Sign in to that workspace, or buy from your own wallet.</p>
  <p><a class="button" href="${WALLET}">Your wallet</a></p>
</section>`,
      };
    }
    const offer = checkout.offer(ctx.principal, ctx.workspaceId, ctx.query.offer ?? '');
    return {
      title: 'Checkout (sandbox)',
      active: 'wallet',
      body: html`<section class="card narrow" aria-labelledby="checkout-h">
  <h1 id="checkout-h">Buy ${number(offer.credits)} credits</h1>
  <dl>
    <dt>Credits</dt><dd>${number(offer.credits)}</dd>
    <dt>Price</dt><dd>${money(offer.price, offer.currency)}</dd>
  </dl>
  <p class="notice" role="note">Sandbox checkout: no payment provider is configured on this installation, so nothing is charged. Paying adds the credits to this workspace the way a provider's confirmation does.</p>
  <form method="post" action="${CHECKOUT}">
    ${csrfField(ctx.csrf)}
    <input type="hidden" name="offer" value="${offer.id}">
    <input type="hidden" name="checkout_id" value="${newId('chk_', 24)}">
    <p class="actions"><button type="submit" class="primary">Pay (sandbox)</button> <a href="${WALLET}">Cancel</a></p>
  </form>
</section>`,
    };
  });

  pages.action(CHECKOUT, async (ctx) => {
    const checkout = ctx.deps.sandboxCheckout;
    if (checkout === null) return unavailable(ctx);
    const { applied, offer } = await checkout.pay(ctx.principal, ctx.workspaceId, ctx.form.get('offer'), ctx.form.get('checkout_id'));
    return {
      redirect: WALLET,
      flash: applied ? `${number(offer.credits)} credits added (sandbox payment).` : 'This checkout was already paid: nothing more was added.',
    };
  });
}
