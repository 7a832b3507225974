import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { errorCatalogue } from '../src/core/errors.js';
import { CYCLE_METERS } from '../src/core/meters/plans.js';
import { PAYMENT_MODES } from '../src/core/wallet/wallet.schema.js';

const README = fileURLToPath(new URL('../README.md', import.meta.url));

/** The table under the README's "The API's Portuguese codes", as one string. */
function glossary(): string {
  const text = readFileSync(README, 'utf8');
  const start = text.indexOf("\n### The API's Portuguese codes\n");
  expect(start, 'README has no glossary of the Portuguese codes').toBeGreaterThan(0);
  const rest = text.slice(start + 1);
  return rest.slice(0, rest.indexOf('\n#'));
}

describe('README: the Portuguese wire codes are glossed once', () => {
  it('names every Portuguese meter, billing mode and error code of the API', () => {
    const table = glossary();
    // Errors whose code is Portuguese (the others are English words already).
    const portugueseErrors = Object.keys(errorCatalogue).filter((code) => /^(saldo|lote|operacao)_/.test(code));
    expect(portugueseErrors.length).toBeGreaterThanOrEqual(4);
    for (const code of [...CYCLE_METERS, 'inspiration_library', ...PAYMENT_MODES, ...portugueseErrors, 'desativar_outra', 'publicacao', 'criacao_de_conteudo']) {
      // As code, alone or after its HTTP status (`402 lote_vencido`).
      expect(table, code).toMatch(new RegExp(`\`(\\d{3} )?${code}\``));
    }
    // 402 here is not "payment required": the row says what it really means.
    expect(table).toMatch(/`402 operacao_sem_preco` \| [^|]*PRICES_JSON[^|]*not a request to pay/);
  });
});
