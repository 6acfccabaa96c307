// The media library's script, served at `/assets/camd-media.js`: a grid of square cells,
// newest first, paged from `/v1/media` by its `Link: rel="next"` header as the grid nears
// its end, with each cell's thumbnail asked for only near the viewport, at the cell's pixel
// size (rounded up to a few steps, so camd's thumbnail cache and the browser's cache hit).
// Thumbnail and file URLs carry the entry's `version`, so the browser keeps them for good.
// Filters live in the URL's query (`camera`, `since`, `until` as dates, `kind`, `cell`).
// `window.camdMedia` tells tests what it did. Plain JavaScript: no build step, no CDN.
'use strict';
(function () {
  const PAGE = 150;
  const STEPS = [64, 96, 128, 160, 192, 256, 320, 384, 512, 640, 768, 1024];
  const $ = selector => document.querySelector(selector);
  const grid = $('#grid'), status = $('#status'), more = $('#more'), form = $('#filters');
  const viewer = $('#viewer'), full = $('#full'), movie = $('#movie'), download = $('#download');
  const confirmBox = $('#confirm'), viewerError = $('#viewer-error');
  const selectButton = $('#select'), sheet = $('#sheet'), chosen = $('#chosen');

  const state = window.camdMedia = {
    items: [], next: null, done: false, loading: null, pages: 0, thumbnailsAsked: 0, thumbnailsLoaded: 0,
    thumbnailSize: 0, firstScreen: null, current: -1, selecting: false, selected: new Set(), error: null,
  };
  let cells = [], firstVisible = null, generation = 0;

  // ---- filters, kept in the URL

  function filters() {
    const query = new URLSearchParams(location.search);
    const pick = name => query.get(name) || '';
    return { camera: pick('camera'), since: pick('since'), until: pick('until'), kind: pick('kind'), cell: pick('cell') };
  }

  function localMidnight(date, days) {
    const [y, m, d] = date.split('-').map(Number);
    return new Date(y, m - 1, d + (days || 0)).toISOString();
  }

  function firstPageURL() {
    const f = filters(), query = new URLSearchParams({ limit: String(PAGE) });
    if (f.camera) query.set('camera', f.camera);
    if (f.kind) query.set('kind', f.kind);
    if (/^\d{4}-\d\d-\d\d$/.test(f.since)) query.set('since', localMidnight(f.since));
    if (/^\d{4}-\d\d-\d\d$/.test(f.until)) query.set('until', localMidnight(f.until, 1));  // the whole last day
    return '/v1/media?' + query;
  }

  function showFilters() {
    const f = filters();
    for (const name of ['camera', 'since', 'until', 'kind']) {
      const field = form.elements[name];
      if (name === 'camera' && f.camera && ![...field.options].some(o => o.value === f.camera)) field.add(new Option(f.camera));
      field.value = f[name];
    }
    const cell = Number(f.cell);
    if (cell >= 48 && cell <= 400) document.documentElement.style.setProperty('--cell', cell + 'px');
  }

  form.addEventListener('change', () => {
    const query = new URLSearchParams(location.search);
    for (const name of ['camera', 'since', 'until', 'kind']) {
      const value = form.elements[name].value;
      if (value) query.set(name, value); else query.delete(name);
    }
    const text = query.toString();
    history.pushState(null, '', location.pathname + (text ? '?' + text : ''));
    reset();
  });
  window.addEventListener('popstate', reset);

  async function loadCameras() {
    try {
      const response = await fetch('/v1/status');
      if (!response.ok) return;
      const field = form.elements.camera;
      for (const camera of (await response.json()).cameras || []) {
        if (![...field.options].some(o => o.value === camera.id)) field.add(new Option(camera.id));
      }
      field.value = filters().camera;
    } catch (e) { /* the list still works without the camera names */ }
  }

  // ---- pages

  function reset() {
    generation += 1;
    showFilters();
    if (viewer.open) viewer.close();
    grid.replaceChildren();
    cells = [];
    firstVisible = null;
    Object.assign(state, { items: [], next: null, done: false, loading: null, pages: 0, firstScreen: null, error: null });
    clearSelection();
    say('Loading…');
    loadPage();
  }

  function loadPage() {
    if (state.done) return Promise.resolve();
    if (!state.loading) state.loading = fetchPage(generation).finally(() => { state.loading = null; });
    return state.loading;
  }

  async function fetchPage(asked) {
    try {
      const response = await fetch(state.next || firstPageURL());
      if (asked !== generation) return;
      reloadIfSignedOut(response);
      if (!response.ok) throw new Error(await errorText(response));
      const items = await response.json();
      if (asked !== generation) return;
      const link = /<([^>]+)>\s*;\s*rel="next"/.exec(response.headers.get('Link') || '');
      state.next = link ? link[1] : null;
      state.done = !state.next;
      state.pages += 1;
      append(items);
      say(state.items.length ? '' : 'Nothing here yet' + (location.search ? ' with these filters.' : ': take a photo or record a movie.'));
    } catch (e) {
      state.error = String(e.message || e);
      say('Could not load the media: ' + state.error);
      state.done = true;
      return;
    }
    // Still near the end (a tall window, a short page)? Then the next page too.
    requestAnimationFrame(() => { if (!state.done && nearEnd()) loadPage(); });
  }

  function nearEnd() { return more.getBoundingClientRect().top < innerHeight * 2; }

  // Refused for want of a sign-in (signed out in another tab, camd restarted): reloading the
  // page is a navigation without credentials, which camd answers with its sign-in page.
  function reloadIfSignedOut(response) {
    if (response.status === 401) location.reload();
  }

  async function errorText(response) {
    try { return (await response.json()).error.message; } catch (e) { return response.status + ' ' + response.statusText; }
  }

  function say(text) { status.textContent = text; }

  new IntersectionObserver(entries => {
    if (entries.some(e => e.isIntersecting)) loadPage();
  }, { rootMargin: '0px 0px 150% 0px' }).observe(more);

  // ---- cells

  const itemOf = new WeakMap();
  const thumbnails = new IntersectionObserver(entries => {
    let size = 0;
    for (const entry of entries) {
      if (!entry.isIntersecting) continue;
      thumbnails.unobserve(entry.target);
      const image = entry.target.querySelector('img'), item = itemOf.get(entry.target);
      if (!item || image.src) continue;
      size = size || thumbnailSize();
      state.thumbnailsAsked += 1;
      image.src = item.poster + '?width=' + size + '&height=' + size + '&fit=cover&v=' + encodeURIComponent(item.version);
    }
  }, { rootMargin: '50% 0px' });

  // The cell's device pixels, rounded up to a step: a few sizes, each rendered once.
  function thumbnailSize() {
    const cell = cells.find(c => c.isConnected);
    const pixels = Math.ceil((cell ? cell.getBoundingClientRect().width : 120) * (window.devicePixelRatio || 1));
    state.thumbnailSize = STEPS.find(step => step >= pixels) || STEPS[STEPS.length - 1];
    return state.thumbnailSize;
  }

  function fileURL(item) {
    return '/v1/media/' + encodeURIComponent(item.name) + '?v=' + encodeURIComponent(item.version);
  }

  function when(item) { return new Date(item.capture_time * 1000).toLocaleString(); }

  function duration(seconds) {
    const whole = Math.round(seconds || 0), h = Math.floor(whole / 3600), m = Math.floor(whole / 60) % 60, s = whole % 60;
    return (h ? h + ':' + String(m).padStart(2, '0') : m) + ':' + String(s).padStart(2, '0');
  }

  function describe(item) {
    return (item.kind === 'video' ? 'Movie, ' + duration(item.duration) : 'Photo') + ', ' + item.camera + ', ' + when(item);
  }

  function append(items) {
    const fragment = document.createDocumentFragment();
    for (const item of items) {
      const cell = document.createElement('button');
      cell.type = 'button';
      cell.className = 'cell loading';
      cell.tabIndex = cells.length || state.items.length ? -1 : 0;
      cell.setAttribute('aria-label', describe(item));
      const image = document.createElement('img');
      image.alt = '';
      image.decoding = 'async';
      image.addEventListener('load', () => loaded(cell), { once: true });
      image.addEventListener('error', () => { cell.classList.replace('loading', 'failed'); }, { once: true });
      cell.append(image);
      if (item.kind === 'video') {
        const badge = document.createElement('span');
        badge.className = 'duration';
        badge.textContent = duration(item.duration);
        badge.setAttribute('aria-hidden', 'true');
        cell.append(badge);
      }
      if (state.selecting) cell.setAttribute('aria-pressed', 'false');
      itemOf.set(cell, item);
      state.items.push(item);
      cells.push(cell);
      fragment.append(cell);
    }
    grid.append(fragment);
    for (const cell of cells.slice(cells.length - items.length)) thumbnails.observe(cell);
    if (!firstVisible) {
      firstVisible = cells.filter(c => { const r = c.getBoundingClientRect(); return r.top < innerHeight && r.bottom > 0; });
      if (!firstVisible.length) state.firstScreen = performance.now();
    }
  }

  function loaded(cell) {
    cell.classList.remove('loading');
    state.thumbnailsLoaded += 1;
    if (state.firstScreen === null && firstVisible && firstVisible.every(c => !c.classList.contains('loading'))) {
      state.firstScreen = performance.now();
    }
  }

  function columns() { return getComputedStyle(grid).gridTemplateColumns.split(' ').length; }

  function focusCell(index) {
    if (index < 0 || !cells.length) return;
    if (index >= cells.length) {
      if (!state.done) loadPage().then(() => { if (index < cells.length) focusCell(index); });
      index = cells.length - 1;
    }
    for (const cell of grid.querySelectorAll('.cell[tabindex="0"]')) cell.tabIndex = -1;
    cells[index].tabIndex = 0;
    cells[index].focus();
  }

  grid.addEventListener('click', event => {
    const cell = event.target.closest('.cell');
    if (!cell) return;
    const index = cells.indexOf(cell);
    if (state.selecting) toggle(index); else open(index);
  });

  grid.addEventListener('keydown', event => {
    const index = cells.indexOf(document.activeElement);
    if (index < 0) return;
    const step = { ArrowRight: 1, ArrowLeft: -1, ArrowDown: columns(), ArrowUp: -columns(),
                   PageDown: columns() * 4, PageUp: -columns() * 4 }[event.key];
    if (step) { event.preventDefault(); focusCell(Math.max(0, index + step)); }
    else if (event.key === 'Home') { event.preventDefault(); focusCell(0); }
    else if (event.key === 'End') { event.preventDefault(); focusCell(cells.length - 1); }
  });

  grid.addEventListener('focusin', event => {
    if (!event.target.classList.contains('cell')) return;
    for (const cell of grid.querySelectorAll('.cell[tabindex="0"]')) if (cell !== event.target) cell.tabIndex = -1;
    event.target.tabIndex = 0;
  });

  // ---- choosing several, for a contact sheet

  selectButton.addEventListener('click', () => {
    state.selecting = !state.selecting;
    selectButton.setAttribute('aria-pressed', String(state.selecting));
    if (!state.selecting) clearSelection();
    for (const cell of cells) {
      if (state.selecting) cell.setAttribute('aria-pressed', 'false'); else cell.removeAttribute('aria-pressed');
    }
    showSelection();
  });

  function toggle(index) {
    const name = state.items[index].name;
    if (state.selected.has(name)) state.selected.delete(name); else state.selected.add(name);
    cells[index].setAttribute('aria-pressed', String(state.selected.has(name)));
    cells[index].setAttribute('aria-selected', String(state.selected.has(name)));
    showSelection();
  }

  function clearSelection() {
    state.selected.clear();
    for (const cell of grid.querySelectorAll('[aria-selected]')) cell.removeAttribute('aria-selected');
    showSelection();
  }

  function showSelection() {
    const count = state.selected.size;
    chosen.textContent = state.selecting ? count + ' selected' : '';
    sheet.hidden = count === 0;
    sheet.href = '/v1/media/contact-sheet?names=' + [...state.selected].map(encodeURIComponent).join(',');
    sheet.textContent = 'Contact sheet of ' + count;
  }

  // ---- the viewer

  function open(index) {
    if (index < 0 || index >= state.items.length) return;
    state.current = index;
    const item = state.items[index];
    const url = fileURL(item);
    $('#viewer-title').textContent = describe(item) + ' · ' + item.name;
    viewerError.hidden = true;
    if (item.kind === 'video') {
      full.hidden = true;
      full.removeAttribute('src');
      movie.hidden = false;
      movie.src = url;
    } else {
      movie.pause();
      movie.removeAttribute('src');
      movie.hidden = true;
      full.hidden = false;
      full.alt = describe(item);
      full.src = url;
    }
    download.href = url;
    download.download = item.name;
    if (!viewer.open) viewer.showModal();
  }

  async function step(by) {
    let index = state.current + by;
    if (index >= state.items.length && !state.done) await loadPage();
    index = Math.min(Math.max(index, 0), state.items.length - 1);
    if (index !== state.current) open(index);
  }

  viewer.addEventListener('keydown', event => {
    if (event.target === movie) return;  // the player seeks with the arrow keys
    if (event.key === 'ArrowRight') { event.preventDefault(); step(1); }
    if (event.key === 'ArrowLeft') { event.preventDefault(); step(-1); }
  });

  viewer.addEventListener('click', event => {
    const act = event.target.closest('[data-act]');
    if (!act) return;
    if (act.dataset.act === 'prev') step(-1);
    if (act.dataset.act === 'next') step(1);
    if (act.dataset.act === 'close') viewer.close();
    if (act.dataset.act === 'delete') askToDelete();
  });

  viewer.addEventListener('close', () => {
    movie.pause();
    movie.removeAttribute('src');
    if (state.current >= 0 && cells[state.current]) focusCell(state.current);
  });

  function askToDelete() {
    const item = state.items[state.current];
    $('#confirm-text').textContent = 'Delete ' + item.name + '? It cannot be undone.';
    confirmBox.returnValue = '';
    confirmBox.showModal();
  }

  confirmBox.addEventListener('close', async () => {
    if (confirmBox.returnValue !== 'delete') return;
    const index = state.current, item = state.items[index];
    const response = await fetch('/v1/media/' + encodeURIComponent(item.name), { method: 'DELETE' });
    reloadIfSignedOut(response);
    if (!response.ok) {
      viewerError.textContent = 'Not deleted: ' + await errorText(response);
      viewerError.hidden = false;
      return;
    }
    state.items.splice(index, 1);
    cells.splice(index, 1)[0].remove();
    state.selected.delete(item.name);
    showSelection();
    if (!state.items.length) { viewer.close(); say('Nothing here now.'); return; }
    open(Math.min(index, state.items.length - 1));
  });

  // A view-only sign-in (`GET /v1/session` says "view") may not delete: no Delete button.
  async function loadAccess() {
    try {
      const response = await fetch('/v1/session', { cache: 'no-store' });
      if (response.ok && (await response.json()).access === 'view') viewer.querySelector('[data-act=delete]').hidden = true;
    } catch (e) { /* everything stays offered; camd still refuses what is not allowed */ }
  }

  showFilters();
  loadAccess();
  loadCameras();
  loadPage();
})();
