import { PLATFORM_SLUGS, PLATFORMS, type PlatformSlug } from '../../../vocabulary/platforms.js';
import { html, type SafeHtml } from '../../../web/html.js';
import { number } from '../../layout.js';
import type { Choices, ComposeValues } from './form.js';

/** The brands with a connection that can publish on `slug`. */
export function brandsOn(choices: Choices, slug: PlatformSlug): string[] {
  return [...new Set(choices.usable.filter((c) => c.platform_slug === slug).map((c) => c.brand_id))];
}

/** Where a brand's connections are added. */
export function connectHref(brandId: string): string {
  return brandId === '' ? '/dashboard/brands' : `/dashboard/brands#brand-${brandId}`;
}

/**
 * The Networks fieldset: only networks the chosen brand is connected to can be ticked; the
 * others offer "Connect →" to the brand's page. Each network carries the brands connected there
 * (`data-brands`), so the script switches the two as the Brand select changes; without it the page shows the
 * state of the brand chosen when it was rendered (or, before any choice, every network some brand can use).
 */
export function networksFieldset(options: {
  choices: Choices;
  values: ComposeValues;
  error: string;
  bad: ReadonlySet<string>;
  attrs: (describedBy: (string | false | undefined)[], invalid: boolean) => SafeHtml;
}): SafeHtml {
  const { choices, values, error, bad, attrs } = options;
  const brand = values.brandId;
  return html`<fieldset class="field networks${error ? ' invalid' : ''}"${attrs(['networks-hint', error && 'networks-error'], false)}>
  <legend>Networks</legend>
  <p class="hint" id="networks-hint">One post per network, through the brand's connection there. Networks the brand is not connected to offer Connect.</p>
  <div class="choices">
  ${PLATFORM_SLUGS.map((slug) => {
    const info = PLATFORMS[slug];
    const id = `platform-${slug}`;
    const connected = brandsOn(choices, slug);
    // Ticked networks stay selectable, so what was sent can be seen and unticked next to its refusal.
    const usable = values.platforms.includes(slug) || (brand === '' ? connected.length > 0 : connected.includes(brand));
    return html`<div class="network" data-network="${slug}" data-brands="${connected.join(' ')}">
    <div class="field check"${usable ? '' : html` hidden`} data-network-pick>
      <input type="checkbox" id="${id}" name="target_platforms" value="${slug}"${values.platforms.includes(slug) ? html` checked` : ''}${attrs([`${id}-hint`, bad.has(slug) && 'networks-error'], bad.has(slug))}>
      <label for="${id}">${info.name}</label>
      <p class="hint" id="${id}-hint">Text up to ${number(info.limits.textMaxChars)} characters; ${info.contentTypes.join(', ')}.</p>
    </div>
    <p class="connect"${usable ? html` hidden` : ''} data-network-connect><span class="network-name">${info.name}</span> <a href="${connectHref(brand)}" data-connect-link>Connect<span class="vh"> ${info.name}</span> →</a></p>
  </div>`;
  })}
  </div>
  ${error ? html`<p class="field-error" id="networks-error">${error}</p>` : ''}
</fieldset>`;
}
