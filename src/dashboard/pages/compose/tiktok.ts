import { TIKTOK_PRIVACY_LEVELS } from '../../../vocabulary/platforms.js';
import { html, type SafeHtml } from '../../../web/html.js';
import type { FieldErrors } from '../../forms.js';
import type { ComposeValues } from './form.js';

/** How TikTok names its privacy levels in its own app. */
const PRIVACY_WORDS: Record<(typeof TIKTOK_PRIVACY_LEVELS)[number], string> = {
  PUBLIC_TO_EVERYONE: 'Everyone',
  MUTUAL_FOLLOW_FRIENDS: 'Friends',
  FOLLOWER_OF_CREATOR: 'Followers',
  SELF_ONLY: 'Only me',
};

const INTERACTIONS = [
  { key: 'comment', label: 'Comments', types: 'photo video reel' },
  { key: 'duet', label: 'Duets', types: 'video reel' },
  { key: 'stitch', label: 'Stitches', types: 'video reel' },
] as const;

/**
 * The creator's TikTok choices (the API's `network_options.tiktok`): TikTok's Direct Post guidelines ask for
 * them with nothing chosen beforehand, so no radio starts checked. Shown for the content types TikTok takes and
 * sent only when TikTok is ticked.
 */
export function tiktokFieldset(values: ComposeValues, errors: FieldErrors): SafeHtml {
  const error = Object.entries(errors).find(([path]) => path.startsWith('network_options.tiktok'))?.[1];
  const chosen = values.tiktok;
  return html`<fieldset class="tiktok-choices${error ? ' invalid' : ''}" id="tiktok-choices" data-show-when-type="photo video reel"${error ? html` aria-describedby="tiktok-choices-error"` : ''}>
  <legend>On TikTok</legend>
  <p class="hint">TikTok asks you to choose these for each post; nothing is chosen for you.</p>
  <div class="field">
    <label for="tiktok_privacy_level">Who can see this post</label>
    <select id="tiktok_privacy_level" name="tiktok_privacy_level">
      <option value=""${chosen.privacy === '' ? html` selected` : ''}>Choose…</option>
      ${TIKTOK_PRIVACY_LEVELS.map((level) => html`<option value="${level}"${chosen.privacy === level ? html` selected` : ''}>${PRIVACY_WORDS[level]}</option>`)}
    </select>
  </div>
  ${INTERACTIONS.map(
    ({ key, label, types }) => html`<fieldset class="field inline" data-show-when-type="${types}">
    <legend>${label}</legend>
    <input type="radio" id="tiktok_allow_${key}_yes" name="tiktok_allow_${key}" value="true"${chosen[key] === 'true' ? html` checked` : ''}><label for="tiktok_allow_${key}_yes">Allow</label>
    <input type="radio" id="tiktok_allow_${key}_no" name="tiktok_allow_${key}" value="false"${chosen[key] === 'false' ? html` checked` : ''}><label for="tiktok_allow_${key}_no">Turn off</label>
  </fieldset>`,
  )}
  ${error ? html`<p class="field-error" id="tiktok-choices-error">${error}</p>` : ''}
</fieldset>`;
}

/** The API's `network_options.tiktok` from what was chosen, or nothing when nothing was. */
export function tiktokOptionsOf(values: ComposeValues): Record<string, unknown> | undefined {
  const { privacy, comment, duet, stitch } = values.tiktok;
  if (privacy === '' && comment === '' && duet === '' && stitch === '') return undefined;
  const flag = (v: string) => (v === '' ? undefined : v === 'true');
  const video = values.contentType !== 'photo';
  return {
    ...(privacy !== '' ? { privacy_level: privacy } : {}),
    ...(comment !== '' ? { allow_comment: flag(comment) } : {}),
    ...(video && duet !== '' ? { allow_duet: flag(duet) } : {}),
    ...(video && stitch !== '' ? { allow_stitch: flag(stitch) } : {}),
  };
}
