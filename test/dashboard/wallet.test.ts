import { expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { sandboxPaymentSecret } from '../../src/core/wallet/sandbox-checkout.js';
import { signPayload } from '../../src/webhooks/signature.js';
import { DashboardClient, textOf } from '../support/dashboard.js';
import { describeEachDb } from '../support/server.js';

const clock = new ManualClock(Date.UTC(2026, 10, 21, 12));

function decode(attr: string): string {
  return attr.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}

describeEachDb(
  'dashboard: wallet',
  (server) => {
    async function signedIn() {
      const ws = await server().workspace();
      const client = new DashboardClient(server().url);
      await client.signIn(ws.api_key);
      return { ws, client };
    }

    it('shows the balance, the batch and the ledger entry of a grant', async () => {
      const { ws, client } = await signedIn();
      const empty = await client.get('/dashboard/wallet');
      expect(textOf(empty.html)).toContain('0 credits');
      expect(textOf(empty.html)).toContain('No entries yet.');

      const granted = await server().container.services.wallet.grant({ workspaceId: ws.workspace_id, amount: 100, source: 'grant', expiresAt: null });
      const page = await client.get('/dashboard/wallet');
      expect(page.status).toBe(200);
      const text = textOf(page.html);
      expect(page.html).toMatch(/<p class="big">100 <span class="unit">credits<\/span><\/p>/);
      expect(text).not.toContain(granted!.batchId);
      expect(text).toMatch(/Grant 100 100 .+ never active/);
      expect(text).toMatch(/Credits added \+100 — 100 credits granted by the operator/);
    });

    it('an expired batch carries an expired badge and its expiry is in the ledger', async () => {
      const { ws, client } = await signedIn();
      await server().container.services.wallet.grant({ workspaceId: ws.workspace_id, amount: 40, source: 'promotion', expiresAt: clock.now() + 60_000 });
      clock.advance(120_000);
      const text = textOf((await client.get('/dashboard/wallet')).html);
      expect(text).toMatch(/Promotion 40 0 .+ expired/);
      expect(text).toMatch(/Expired -40 — The unused credits of a batch expired/);
      expect(text).toContain('0 credits');
    });

    it('offers link to the same payment URLs as the REST offers', async () => {
      const { ws, client } = await signedIn();
      const rest = await server().request<{ data: { credits: number; payment_url: string }[] }>('GET', `/v1/workspaces/${ws.workspace_id}/wallet/offers`, { key: ws.api_key });
      const page = await client.get('/dashboard/wallet');
      const links = [...page.html.matchAll(/<a class="button" href="([^"]+)" rel="noopener noreferrer">Buy ([\d,]+) credits \(sandbox\)<\/a>/g)].map((m) => ({
        url: decode(m[1]!),
        credits: Number(m[2]!.replace(/,/g, '')),
      }));
      expect(links).toEqual(rest.body.data.map((o) => ({ url: o.payment_url, credits: o.credits })));
      expect(links.length).toBeGreaterThan(0);
      // The default packages are priced in BRL: the English page names the currency by its code, never "R$".
      expect(textOf(page.html)).toContain('100 BRL 49.00 Buy 100 credits (sandbox)');
      expect(textOf(page.html)).toContain('buying opens a sandbox checkout');
      // The page is English whatever the browser's language: a Brazilian browser gets the same figures.
      const brazil = await client.raw('/dashboard/wallet', { headers: { 'accept-language': 'pt-BR,pt;q=0.9' } });
      expect(textOf(await brazil.text())).toContain('100 BRL 49.00 Buy 100 credits');
    });

    it('the price form shows what the REST price says for publicacao × 3', async () => {
      const { ws, client } = await signedIn();
      await server().container.services.wallet.grant({ workspaceId: ws.workspace_id, amount: 7, source: 'grant', expiresAt: null });
      const rest = await server().request<{ preco_unitario: number; custo_estimado: number; saldo_disponivel: number; coberto_pelo_plano: boolean }>(
        'GET',
        `/v1/workspaces/${ws.workspace_id}/wallet/preco?operacao=publicacao&quantidade=3`,
        { key: ws.api_key },
      );
      const page = await client.get('/dashboard/wallet?operation=publicacao&quantity=3');
      expect(page.status).toBe(200);
      const text = textOf(page.html);
      expect(text).toContain(`Price per unit ${rest.body.preco_unitario} credits`);
      expect(text).toContain(`Estimated cost ${rest.body.custo_estimado} credits`);
      expect(text).toContain(`Available balance ${rest.body.saldo_disponivel} credits`);
      expect(rest.body.coberto_pelo_plano).toBe(true);
      expect(text).toContain('Covered by the plan Yes');
      expect(text).toContain('Your plan still covers this quantity this cycle: paid with Plan (or Plan, then credits) it costs no credits.');
      expect(text).not.toMatch(/modo|plano|creditos/);
      // Covered by the plan: no warning about the balance beside it.
      expect(text).not.toContain('Your balance does not cover this cost');
      // The form keeps the question; it offers the priced operations and nothing else.
      expect(page.html).toContain('<option value="publicacao" selected>');
      expect([...page.html.matchAll(/<option value="([^"]+)"/g)].map((m) => m[1])).toEqual(['publicacao', 'criacao_de_conteudo']);
      expect(page.html).toContain('value="3"');
    });

    it('an operation without a price explains operacao_sem_preco next to the form, with 402', async () => {
      const { client } = await signedIn();
      const page = await client.get('/dashboard/wallet?operation=boost_post&quantity=1');
      expect(page.status).toBe(402);
      expect(page.html).toMatch(/<div class="error-banner" role="alert"><p>This operation has no published price, so it cannot be paid with credits\. Contact support\.<\/p><\/div>/);
      expect(textOf(page.html)).toContain('Wallet');
    });

    it('garbage in the address gives a message and 400, never a 500', async () => {
      const { client } = await signedIn();
      const quantity = await client.get('/dashboard/wallet?operation=publicacao&quantity=abc');
      expect(quantity.status).toBe(400);
      expect(quantity.html).toContain('<p class="field-error" id="price-quantity-error">Enter a whole number from 1 to 100,000.</p>');
      const tooMany = await client.get('/dashboard/wallet?operation=publicacao&quantity=100001');
      expect(tooMany.status).toBe(400);
      const cursor = await client.get('/dashboard/wallet?cursor=garbage');
      expect(cursor.status).toBe(400);
      expect(textOf(cursor.html)).toContain('The ledger position in the address is not one this page gave out.');
      const limit = await client.get('/dashboard/wallet?limit=abc');
      expect(limit.status).toBe(400);
      expect(textOf(limit.html)).toContain('The page size in the address must be a whole number from 1 to 200.');
    });

    it('Buy credits works on a default install: the sandbox checkout adds the offer once through the signed callback path', async () => {
      const { ws, client } = await signedIn();
      const wallet = await client.get('/dashboard/wallet');
      const href = decode(/<a class="button" href="([^"]+)" rel="noopener noreferrer">Buy 100 credits/.exec(wallet.html)![1]!);
      expect(href).toContain(`/dashboard/pay?offer=`);
      const checkout = await client.get(new URL(href).pathname + new URL(href).search);
      expect(checkout.status).toBe(200);
      const text = textOf(checkout.html);
      expect(text).toContain('Buy 100 credits');
      expect(text).toContain('Sandbox checkout');
      // The navigation stays: the page is part of the dashboard.
      expect(checkout.html).toContain('href="/dashboard/wallet" aria-current="page"');
      const checkoutId = /name="checkout_id" value="([^"]+)"/.exec(checkout.html)![1]!;
      const offer = /name="offer" value="([^"]+)"/.exec(checkout.html)![1]!;
      const paid = await client.post('/dashboard/pay', { offer, checkout_id: checkoutId });
      expect(paid.url).toMatch(/\/dashboard\/wallet$/);
      expect(textOf(paid.html)).toContain('100 credits added (sandbox payment).');
      expect(paid.html).toMatch(/<p class="big">100 <span class="unit">credits<\/span><\/p>/);
      // The same form sent again (a double click, a reload) adds nothing more.
      const again = await client.post('/dashboard/pay', { offer, checkout_id: checkoutId });
      expect(textOf(again.html)).toContain('This checkout was already paid: nothing more was added.');
      const statement = await server().request('GET', `/v1/workspaces/${ws.workspace_id}/wallet`, { key: ws.api_key });
      expect(statement.body.saldo).toBe(100);
      expect(statement.body.lotes).toEqual([expect.objectContaining({ source: 'purchase', amount: 100 })]);

      const forged = await client.post('/dashboard/pay', { offer, checkout_id: 'x' });
      expect(forged.status).toBe(400);
      const unknown = await client.get('/dashboard/pay?offer=pack_free&workspace=' + ws.workspace_id);
      expect(unknown.status).toBe(404);
      expect(textOf(unknown.html)).toContain('There is no credit package pack_free on sale.');
      const other = await server().workspace('Other');
      const foreign = await client.get(`/dashboard/pay?offer=${offer}&workspace=${other.workspace_id}`);
      expect(foreign.status).toBe(403);
      expect(textOf(foreign.html)).toContain('This checkout is for another workspace');
      // Named in words: the signed-in workspace by its name, neither by its id.
      expect(textOf(foreign.html)).toContain('another workspace than the one you are signed in to, Test workspace.');
      expect(textOf(foreign.html).replace(/Workspace: Test workspace/, '')).not.toMatch(/ws_/);
      expect((await server().request('GET', `/v1/workspaces/${other.workspace_id}/wallet`, { key: other.api_key })).body.saldo).toBe(0);
      // Signed out, the checkout asks to sign in and comes back.
      // The first address of the checkout still leads to it.
      const old = await client.raw(`/pay?offer=${offer}&workspace=${ws.workspace_id}`);
      expect(old.status).toBe(303);
      expect(old.headers.get('location')).toBe(`/dashboard/pay?offer=${offer}&workspace=${ws.workspace_id}`);
      const stranger = new DashboardClient(server().url);
      const out = await stranger.raw(new URL(href).pathname + new URL(href).search);
      expect(out.status).toBe(303);
      expect(out.headers.get('location')).toContain('/dashboard/sign-in?');
    });

    it('names packages, batches and ledger entries in words, never by internal id; the plan meters say what counts and when they reset', async () => {
      const { ws, client } = await signedIn();
      const principal = { kind: 'api_key' as const, workspaceId: ws.workspace_id, keyId: ws.key_id, role: 'admin' as const, brandIds: null };
      const { services } = server().container;
      // A purchase through the sandbox checkout, then a post paid in credits and one paid by the plan.
      const wallet = await client.get('/dashboard/wallet');
      const href = new URL(decode(/<a class="button" href="([^"]+)" rel="noopener noreferrer">Buy 500 credits/.exec(wallet.html)![1]!));
      const checkout = await client.get(href.pathname + href.search);
      expect(textOf(checkout.html)).toContain('Credits 500 Price BRL 199.00');
      expect(textOf(checkout.html)).not.toMatch(/pack_/);
      await client.post('/dashboard/pay', { offer: /name="offer" value="([^"]+)"/.exec(checkout.html)![1]!, checkout_id: /name="checkout_id" value="([^"]+)"/.exec(checkout.html)![1]! });
      const brand = await services.brands.create(principal, ws.workspace_id, { name: 'Acme' });
      await services.connections.createSandbox(principal, ws.workspace_id, brand.id, { platform_slug: 'threads', mode: 'sandbox', name: 'T' });
      const paid = await services.contents.create(principal, ws.workspace_id, { brand_id: brand.id, target_platforms: ['threads'], content_type: 'text', text: 'paid', modo: 'creditos' });
      await services.contents.create(principal, ws.workspace_id, { brand_id: brand.id, target_platforms: ['threads'], content_type: 'text', text: 'plan' });

      const page = await client.get('/dashboard/wallet');
      expect(page.status).toBe(200);
      const text = textOf(page.html);
      const statement = await services.wallet.statement(principal, ws.workspace_id, { limit: 50 });
      for (const batch of statement.lotes) expect(text).not.toContain(batch.id);
      expect(statement.ledger.data.some((l) => l.reference?.startsWith('payment:'))).toBe(true);
      expect(text).not.toMatch(/lote_|payment:|pack_|chk_|led_/);
      expect(text).toMatch(/Credits added \+500 — Purchase of 500 credits/);
      expect(text).toMatch(/Credits spent -\d+ Publication Paid for a post/);
      if (!paid.outcome.ok) throw paid.outcome.error;
      expect(page.html).toContain(`<a href="/dashboard/contents/${paid.outcome.value.content_id}">a post</a>`);
      expect(text).toMatch(/Purchase 500 \d+ /);
      // Both posts count as creations; only the plan-paid one counts as a publication of the plan.
      expect(text).toContain('Your plan this cycle');
      expect(text).toMatch(/Content creations this cycle \d+ of 2,000 One for each post when it starts publishing/);
      expect(text).toMatch(/Publications this cycle \d+ of 10,000 One for each network a post goes out to/);
      expect(text).toContain('both counts start again from zero on 1 December 2026 at 00:00 UTC');
    });

    it('pages through the ledger with "Older entries"', async () => {
      const { ws, client } = await signedIn();
      for (let i = 1; i <= 5; i++) {
        await server().container.services.wallet.grant({ workspaceId: ws.workspace_id, amount: i, source: 'grant', expiresAt: null, externalRef: `ref-${i}` });
        clock.advance(1000);
      }
      const seen: string[] = [];
      let path: string | null = '/dashboard/wallet?limit=2';
      for (let pages = 0; path !== null; pages++) {
        expect(pages).toBeLessThan(3);
        const page = await client.get(path);
        expect(page.status).toBe(200);
        seen.push(...[...textOf(page.html).matchAll(/Credits added \+(\d) — /g)].map((m) => m[1]!));
        const older = /<a href="([^"]+)">Older entries<\/a>/.exec(page.html)?.[1];
        if (older) expect(decode(older)).toMatch(/^\/dashboard\/wallet\?limit=2&cursor=[\w-]+#ledger-h$/);
        path = older ? decode(older) : null;
      }
      expect(seen).toEqual(['5', '4', '3', '2', '1']);
      expect(textOf((await client.get('/dashboard/wallet')).html)).toContain('15 credits');
    });
  },
  {},
  () => ({ clock }),
);

describeEachDb(
  'dashboard: wallet with a payment provider',
  (server) => {
    it('offers lead to the provider; /pay grants nothing and says where buying happens; sandbox signatures are refused', async () => {
      const ws = await server().workspace();
      const client = new DashboardClient(server().url);
      await client.signIn(ws.api_key);
      const page = await client.get('/dashboard/wallet');
      expect(page.html).toContain('href="https://pay.example.com/checkout?o=');
      expect(page.html).not.toContain('(sandbox)');
      const pay = await client.get(`/dashboard/pay?offer=pack_100&workspace=${ws.workspace_id}`);
      expect(pay.status).toBe(404);
      expect(textOf(pay.html)).toContain('No checkout here');
      expect(pay.html).toContain('aria-current="page"');
      const posted = await client.post('/dashboard/pay', { offer: 'pack_100', checkout_id: 'chk_aaaaaaaaaaaaaaaaaaaaaaaa' });
      expect(posted.status).toBe(404);
      // The sandbox's derived key is not a key here: the callback refuses an event signed with it.
      const body = JSON.stringify({ event_id: 'evt_forged', type: 'payment.succeeded', workspace_id: ws.workspace_id, offer_id: 'pack_100' });
      const timestamp = String(Math.floor(clock.now() / 1000));
      const signature = signPayload(sandboxPaymentSecret(server().container.secretKey), `${timestamp}.${body}`);
      const callback = await server().request('POST', '/v1/payments/callback', {
        rawBody: body,
        headers: { 'content-type': 'application/json', 'payment-timestamp': timestamp, 'payment-signature': signature },
      });
      expect(callback.status).toBe(404);
      expect((await server().request('GET', `/v1/workspaces/${ws.workspace_id}/wallet`, { key: ws.api_key })).body.saldo).toBe(0);
    });
  },
  { PAYMENT_URL_TEMPLATE: 'https://pay.example.com/checkout?o={offer_id}&w={workspace_id}' },
  () => ({ clock }),
);
