// Publisher dashboard: progressive enhancement only. Every page works without this script; it adds copy
// buttons, confirmations, live character counters, the thread editor, the When choice (date and time shown for
// Schedule, the submit button saying what it will do, the brand's time zone) and refreshing while jobs run.

import { measureText } from './text-length.js';

const $$ = (selector, root = document) => Array.from(root.querySelectorAll(selector));
const chars = (text) => Array.from(text).length;

function copyButtons() {
  for (const button of $$('[data-copy]')) {
    button.addEventListener('click', async () => {
      const input = document.getElementById(button.dataset.copy);
      if (!input) return;
      input.select();
      try {
        await navigator.clipboard.writeText(input.value);
      } catch {
        document.execCommand('copy');
      }
      button.textContent = 'Copied';
      setTimeout(() => (button.textContent = 'Copy'), 2000);
    });
  }
}

function confirmations() {
  document.addEventListener('submit', (event) => {
    const form = event.target;
    if (form instanceof HTMLFormElement && form.dataset.confirm && !window.confirm(form.dataset.confirm)) event.preventDefault();
  });
}

/**
 * `<output data-counter-for="ID" data-limits='{"threads":500}' data-countings='{"x":"x_weighted"}'>`: characters
 * of #ID against the limit of each platform chosen in `input[name=target_platforms]`, counted as that platform
 * counts (its own count is shown when it differs); or, with `data-limit` and `data-counting`, against one limit.
 * The words are the server's (src/dashboard/pages/compose/counter.ts).
 */
function updateCounter(output) {
  const source = document.getElementById(output.dataset.counterFor);
  if (!source) return;
  let length = chars(source.value);
  const parts = [];
  if (output.dataset.limit) {
    const limit = Number(output.dataset.limit);
    if (output.dataset.counting) length = measureText(output.dataset.counting, source.value);
    parts.push({ label: `of ${limit.toLocaleString('en-US')}`, over: length > limit });
  } else {
    const limits = JSON.parse(output.dataset.limits || '{}');
    const countings = JSON.parse(output.dataset.countings || '{}');
    const names = JSON.parse(output.dataset.names || '{}');
    const chosen = $$('input[name=target_platforms]:checked').map((i) => i.value).filter((slug) => slug in limits);
    for (const slug of chosen) {
      const counted = countings[slug] ? measureText(countings[slug], source.value) : length;
      const limit = limits[slug].toLocaleString('en-US');
      const label = counted === length ? `${names[slug] || slug} ${limit}` : `${names[slug] || slug} counts ${counted.toLocaleString('en-US')} of ${limit}`;
      parts.push({ label, over: counted > limits[slug] });
    }
  }
  output.replaceChildren(document.createTextNode(`${length.toLocaleString('en-US')} characters`));
  if (parts.length > 0) output.append(document.createTextNode(' — '));
  parts.forEach((part, i) => {
    if (i > 0) output.append(document.createTextNode(', '));
    const span = document.createElement('span');
    span.textContent = part.over ? `${part.label}: too long` : part.label;
    if (part.over) span.className = 'over';
    output.append(span);
  });
}

function counters() {
  const all = () => $$('[data-counter-for]');
  const refresh = () => all().forEach(updateCounter);
  document.addEventListener('input', (event) => {
    const id = event.target && event.target.id;
    for (const output of all()) if (output.dataset.counterFor === id) updateCounter(output);
  });
  document.addEventListener('change', (event) => {
    if (event.target && event.target.name === 'target_platforms') refresh();
  });
  refresh();
}

/**
 * `[data-show-when-type="video reel"]`: shown only while the content type select has one of those values; with
 * `data-show-when-network="youtube tiktok"` also only while one of those networks is ticked.
 */
function typeSections() {
  const select = document.getElementById('content_type');
  if (!select) return;
  const apply = () => {
    const ticked = $$('input[name=target_platforms]:checked').map((i) => i.value);
    for (const section of $$('[data-show-when-type]')) {
      const network = section.dataset.showWhenNetwork;
      section.hidden = !section.dataset.showWhenType.split(' ').includes(select.value) || (network !== undefined && !network.split(' ').some((n) => ticked.includes(n)));
    }
  };
  select.addEventListener('change', apply);
  document.addEventListener('change', (event) => {
    if (event.target && event.target.name === 'target_platforms') apply();
  });
  apply();
}

/**
 * `.network[data-brands]`: a network can be ticked only when the chosen brand is connected there; otherwise its
 * "Connect →" link (to that brand's card) shows instead, and a tick left on it is taken off.
 */
function brandNetworks() {
  const select = document.getElementById('brand_id');
  if (!select) return;
  const apply = () => {
    const brand = select.value;
    for (const network of $$('.network[data-brands]')) {
      const brands = network.dataset.brands.split(' ').filter(Boolean);
      const usable = brand === '' ? brands.length > 0 : brands.includes(brand);
      const pick = network.querySelector('[data-network-pick]');
      const connect = network.querySelector('[data-network-connect]');
      const box = pick?.querySelector('input');
      if (!usable && box?.checked) {
        box.checked = false;
        box.dispatchEvent(new window.Event('change', { bubbles: true }));
      }
      if (pick) pick.hidden = !usable;
      if (connect) connect.hidden = usable;
      const link = network.querySelector('[data-connect-link]');
      if (link) link.href = brand === '' ? '/dashboard/brands' : `/dashboard/brands#brand-${brand}`;
    }
  };
  select.addEventListener('change', apply);
  apply();
}

/**
 * `[data-tabs]` holding `[data-tab]` panels (fieldsets without scripts): a tab per panel of a ticked network
 * (`input[name=target_platforms]`), one panel shown at a time; arrows move between tabs (WAI-ARIA tabs).
 */
function tabs() {
  for (const container of $$('[data-tabs]')) {
    const panels = $$('[data-tab]', container);
    const list = document.createElement('div');
    list.setAttribute('role', 'tablist');
    list.setAttribute('aria-label', 'Networks');
    list.className = 'tablist';
    container.classList.add('tabbed');
    container.prepend(list);
    const none = document.createElement('p');
    none.className = 'hint';
    none.textContent = 'Tick a network above to give it its own text.';
    container.prepend(none);
    let current = null;
    const buttons = new Map();
    for (const panel of panels) {
      const button = document.createElement('button');
      button.type = 'button';
      button.id = `${panel.id}-tab`;
      button.textContent = panel.dataset.tabLabel;
      button.setAttribute('role', 'tab');
      button.setAttribute('aria-controls', panel.id);
      panel.setAttribute('role', 'tabpanel');
      panel.setAttribute('aria-labelledby', button.id);
      button.addEventListener('click', () => select(panel.dataset.tab));
      buttons.set(panel.dataset.tab, button);
      list.append(button);
    }
    const visible = () => {
      const ticked = $$('input[name=target_platforms]:checked').map((i) => i.value);
      return panels.filter((p) => ticked.includes(p.dataset.tab)).map((p) => p.dataset.tab);
    };
    const select = (slug, focus = false) => {
      current = slug;
      for (const panel of panels) {
        const on = panel.dataset.tab === slug;
        panel.hidden = !on;
        const button = buttons.get(panel.dataset.tab);
        button.setAttribute('aria-selected', String(on));
        button.tabIndex = on ? 0 : -1;
        if (on && focus) button.focus();
      }
    };
    const apply = () => {
      const shown = visible();
      for (const [slug, button] of buttons) button.hidden = !shown.includes(slug);
      // An empty tab list is not offered at all (a tablist needs a tab).
      list.hidden = shown.length === 0;
      none.hidden = shown.length > 0;
      // A panel with an error is chosen first, so the refusal is on screen.
      const invalid = panels.find((p) => shown.includes(p.dataset.tab) && p.classList.contains('invalid'));
      if (!shown.includes(current)) select(invalid ? invalid.dataset.tab : shown[0] ?? null);
    };
    list.addEventListener('keydown', (event) => {
      const shown = visible();
      const at = shown.indexOf(current);
      if (event.key === 'ArrowRight' || event.key === 'ArrowLeft') {
        event.preventDefault();
        const next = shown[(at + (event.key === 'ArrowRight' ? 1 : shown.length - 1)) % shown.length];
        if (next) select(next, true);
      }
    });
    document.addEventListener('change', (event) => {
      if (event.target && event.target.name === 'target_platforms') apply();
    });
    const invalid = panels.find((p) => p.classList.contains('invalid'));
    current = null;
    apply();
    if (invalid && visible().includes(invalid.dataset.tab)) select(invalid.dataset.tab);
  }
}

/**
 * `[data-thread-editor]` holds `.thread-post` blocks (a textarea each), a `<template>` for a new one, a
 * `[data-thread-add]` button and `[data-thread-remove]` buttons. Labels and ids are renumbered after each change.
 */
function threadEditor() {
  for (const editor of $$('[data-thread-editor]')) {
    const list = editor.querySelector('[data-thread-list]');
    const template = editor.querySelector('template');
    const add = editor.querySelector('[data-thread-add]');
    const max = Number(editor.dataset.max || 25);
    const renumber = () => {
      $$('.thread-post', list).forEach((post, i) => {
        const n = i + 1;
        const area = post.querySelector('textarea');
        const label = post.querySelector('label');
        const output = post.querySelector('[data-counter-for]');
        const remove = post.querySelector('[data-thread-remove]');
        area.id = `thread-${n}`;
        label.htmlFor = area.id;
        label.textContent = `Post ${n}`;
        if (output) {
          output.dataset.counterFor = area.id;
          output.id = `thread-${n}-count`;
          area.setAttribute('aria-describedby', output.id);
          updateCounter(output);
        }
        if (remove) remove.setAttribute('aria-label', `Remove post ${n}`);
      });
      const count = $$('.thread-post', list).length;
      if (add) add.disabled = count >= max;
      for (const remove of $$('[data-thread-remove]', list)) remove.disabled = count <= 1;
    };
    add?.addEventListener('click', () => {
      list.append(template.content.cloneNode(true));
      renumber();
      const areas = $$('textarea', list);
      areas[areas.length - 1]?.focus();
    });
    list.addEventListener('click', (event) => {
      const remove = event.target.closest('[data-thread-remove]');
      if (!remove) return;
      const post = remove.closest('.thread-post');
      const previous = post.previousElementSibling;
      post.remove();
      renumber();
      (previous?.querySelector('textarea') || list.querySelector('textarea'))?.focus();
    });
    renumber();
  }
}

/**
 * `[data-refresh-while]` (with an id): while present, the page is fetched again every 2 s and that element is
 * replaced by its new version, until the new version no longer says it is running.
 */
function refreshing() {
  const tick = async () => {
    const running = $$('[data-refresh-while]');
    if (running.length === 0) return;
    try {
      const res = await fetch(window.location.href, { headers: { accept: 'text/html' }, credentials: 'same-origin' });
      if (!res.ok || res.redirected) return;
      const doc = new DOMParser().parseFromString(await res.text(), 'text/html');
      for (const element of running) {
        const fresh = doc.getElementById(element.id);
        if (fresh) element.replaceWith(document.importNode(fresh, true));
      }
    } finally {
      if ($$('[data-refresh-while]').length > 0) setTimeout(tick, 2000);
    }
  };
  if ($$('[data-refresh-while]').length > 0) setTimeout(tick, 2000);
}

/**
 * `fieldset[data-when]`: radios `name=when`; `[data-show-when="schedule"]` parts show only for their choice; with
 * `data-submit-labels`, the form's primary button takes the label of the choice; typing a date or time picks Schedule.
 */
function whenChoices() {
  for (const fieldset of $$('[data-when]')) {
    const form = fieldset.closest('form');
    const radios = $$('input[name=when]', fieldset);
    const apply = () => {
      const chosen = radios.find((r) => r.checked)?.value;
      for (const part of $$('[data-show-when]', fieldset)) part.hidden = !part.dataset.showWhen.split(' ').includes(chosen);
      const button = fieldset.dataset.submitLabels && form?.querySelector('button.primary[type=submit]');
      if (button) {
        const labels = JSON.parse(fieldset.dataset.submitLabels);
        if (labels[chosen]) button.textContent = labels[chosen];
      }
    };
    for (const radio of radios) radio.addEventListener('change', apply);
    for (const input of $$('input[type=date], input[type=time]', fieldset)) {
      input.addEventListener('input', () => {
        const schedule = radios.find((r) => r.value === 'schedule');
        if (schedule && !schedule.checked) {
          schedule.checked = true;
          apply();
        }
      });
    }
    apply();
  }
}

/**
 * The zone named next to the date and time follows the brand chosen (`<option data-zone>`), and so does the
 * suggested date and time (`data-suggest-date`, `data-suggest-time`) while the person has not changed them.
 */
function brandZone() {
  const select = document.getElementById('brand_id');
  const name = document.querySelector('[data-zone-name]');
  if (!select || !name) return;
  const date = document.getElementById('publish-date');
  const time = document.getElementById('publish-time');
  let suggested = { date: date?.value, time: time?.value };
  const apply = () => {
    const option = select.selectedOptions[0];
    name.textContent = option?.dataset.zone || 'the brand’s';
    const next = option?.dataset.suggestDate && option.dataset.suggestTime ? { date: option.dataset.suggestDate, time: option.dataset.suggestTime } : null;
    if (!date || !time || !next || date.value !== suggested.date || time.value !== suggested.time) return;
    date.value = next.date;
    time.value = next.time;
    suggested = next;
  };
  select.addEventListener('change', apply);
  apply();
}

/**
 * After a preview or a refused submit the page is drawn again; focus goes to what it is about (the preview, the
 * error summary: `[data-focus-on-load]`, which carries tabindex="-1") instead of staying at the top of the page.
 */
function focusOnLoad() {
  const target = document.querySelector('[data-focus-on-load]');
  if (!target) return;
  target.focus();
  target.scrollIntoView({ block: 'start' });
}

/**
 * `details[data-menu]`: the navigation is always open on a wide screen and starts closed on a phone (app.css
 * hides its summary when wide); crossing the width opens or closes it again.
 */
function menu() {
  const details = document.querySelector('[data-menu]');
  if (!details) return;
  const wide = window.matchMedia('(min-width: 37.5rem)');
  const apply = () => {
    details.open = wide.matches;
  };
  wide.addEventListener('change', apply);
  apply();
}

/**
 * `input[data-browser-zone]`: a new brand's time zone starts as the browser's own (UTC without scripts, or when
 * the browser names none); the server stores it under its current IANA name.
 */
function browserZone() {
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  if (!zone) return;
  for (const input of $$('input[data-browser-zone]')) if (input.value === 'UTC') input.value = zone;
}

menu();
browserZone();
copyButtons();
confirmations();
whenChoices();
brandZone();
counters();
brandNetworks();
typeSections();
tabs();
threadEditor();
refreshing();
focusOnLoad();
