import { PLATFORM_SLUGS, PLATFORMS, textLengthOn } from '../../../vocabulary/platforms.js';
import { html, type SafeHtml } from '../../../web/html.js';
import type { FieldErrors } from '../../forms.js';
import { number } from '../../layout.js';
import { type ComposeValues, TITLE_TYPES } from './form.js';

/**
 * Per-network text and title (the API's `overrides`). Without scripts each network is a
 * fieldset, one under the other; the script turns them into tabs and shows only the networks ticked. An empty
 * box means "the main text" (or title): nothing is sent for it.
 */
export function overridesSection(values: ComposeValues, errors: FieldErrors, textarea: (o: { id: string; name: string; rows: number; value: string; maxlength: number; aria: SafeHtml }) => SafeHtml): SafeHtml {
  const open = PLATFORM_SLUGS.some((slug) => values.overrides[slug] !== undefined || Object.keys(errors).some((p) => p.startsWith(`overrides.${slug}.`)));
  return html`<details class="overrides"${open ? html` open` : ''} data-show-when-type="text photo video reel">
  <summary>Different text per network</summary>
  <p class="hint" id="overrides-hint">Leave a box empty to use the main text (and title). Each network counts its own limit.</p>
  <div class="tabs" data-tabs>
  ${PLATFORM_SLUGS.map((slug) => {
    const info = PLATFORMS[slug];
    const textId = `override-text-${slug}`;
    const titleId = `override-title-${slug}`;
    const typed = values.overrides[slug];
    const textError = errors[`overrides.${slug}.text`];
    const titleError = errors[`overrides.${slug}.title`];
    const describe = (id: string, error: string | undefined) =>
      html` aria-describedby="overrides-hint ${id}-count${error ? ` ${id}-error` : ''}"${error ? html` aria-invalid="true"` : ''}`;
    return html`<fieldset class="tab-panel${textError || titleError ? ' invalid' : ''}" id="override-${slug}" data-tab="${slug}" data-tab-label="${info.name}">
    <legend>${info.name}</legend>
    ${
      info.limits.titleMaxChars !== null
        ? html`<div class="field${titleError ? ' invalid' : ''}" data-show-when-type="${TITLE_TYPES.join(' ')}">
      <label for="${titleId}">Title on ${info.name}</label>
      <input id="${titleId}" name="override_title_${slug}" type="text" maxlength="1000" value="${typed?.title ?? ''}"${describe(titleId, titleError)}>
      <output class="counter" id="${titleId}-count" data-counter-for="${titleId}" data-limit="${info.limits.titleMaxChars}" data-counting="${info.textCounting}">${number(textLengthOn(slug, typed?.title ?? ''))} characters — of ${number(info.limits.titleMaxChars)}</output>
      ${titleError ? html`<p class="field-error" id="${titleId}-error">${titleError}</p>` : ''}
    </div>`
        : ''
    }
    <div class="field${textError ? ' invalid' : ''}">
      <label for="${textId}">Text on ${info.name}</label>
      ${textarea({ id: textId, name: `override_text_${slug}`, rows: 4, value: typed?.text ?? '', maxlength: 100_000, aria: describe(textId, textError) })}
      <output class="counter" id="${textId}-count" data-counter-for="${textId}" data-limit="${info.limits.textMaxChars}" data-counting="${info.textCounting}">${number(textLengthOn(slug, typed?.text ?? ''))} characters — of ${number(info.limits.textMaxChars)}</output>
      ${textError ? html`<p class="field-error" id="${textId}-error">${textError}</p>` : ''}
    </div>
  </fieldset>`;
  })}
  </div>
</details>`;
}
