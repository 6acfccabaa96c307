// The page of every camera (`/`), served at `/assets/camd.js`: a card per camera with its
// live view (camd-live.js), its state, photo, recording and start/stop buttons, its device
// controls and its capture settings. Plain JavaScript shipped inside camd: no build step,
// no CDN, nothing fetched from elsewhere, so it works on a machine that is offline.
//
// The state follows the event stream (`/v1/events`); where that is missing or broken (an
// older camd, a proxy that buffers it) the page polls `/v1/cameras` instead. With a
// view-only sign-in (`GET /v1/session` says "view") what changes things is hidden or off.
// Every check of a value is the API's: the page shows its error text where it belongs.
'use strict';
(function () {
  const POLL_MS = 3000;
  const EVENTS_RETRY_MS = 60000;
  const SESSION_CHECK_MS = 10000;
  const cards = new Map();
  const main = document.getElementById('cameras');
  const notice = document.getElementById('notice');
  const connection = document.getElementById('connection');
  let viewOnly = false;
  let poller = null;
  let serial = 0;

  const STATES = {
    running: 'Running', idle: 'Stopped', starting: 'Starting', stopping: 'Stopping',
    'waiting-for-device': 'Waiting for its device', failed: 'Failed',
  };

  // One request to camd: the decoded JSON, or an Error with the API's own message.
  async function api(method, path, body) {
    const init = { method, cache: 'no-store', headers: {} };
    if (body !== undefined) {
      init.headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    const response = await fetch(path, init);
    const text = await response.text();
    let data = null;
    try { data = text ? JSON.parse(text) : null; } catch (e) { /* not JSON */ }
    // Refused for want of a sign-in (signed out in another tab, camd restarted): reloading
    // the page is a navigation without credentials, which camd answers with its sign-in page.
    if (response.status === 401) location.reload();
    if (!response.ok) {
      const error = new Error((data && data.error && data.error.message) || response.status + ' ' + response.statusText);
      error.status = response.status;
      throw error;
    }
    return data;
  }

  // Sets text only when it changes, so live regions announce changes and nothing else.
  function setText(element, text) {
    if (element.textContent !== text) element.textContent = text;
  }

  function mediaLink(name) {
    const link = document.createElement('a');
    link.href = '/v1/media/' + encodeURIComponent(name);
    link.textContent = name;
    return link;
  }

  function size(bytes) {
    return bytes >= 1048576 ? (bytes / 1048576).toFixed(1) + ' MB' : Math.max(1, Math.round(bytes / 1024)) + ' KB';
  }

  function make(tag, className, text) {
    const element = document.createElement(tag);
    if (className) element.className = className;
    if (text !== undefined) element.textContent = text;
    return element;
  }

  class Card {
    constructor(id) {
      this.id = id;
      this.path = '/v1/cameras/' + encodeURIComponent(id);
      this.status = {};
      this.live = null;
      this.recording = false;
      this.controls = new Map();
      this.controlWrites = new Map();
      this.controlNames = null;
      const root = this.root = document.getElementById('camera-card').content.firstElementChild.cloneNode(true);
      const key = root.id = 'camera-' + (++serial);
      const $ = this.$ = selector => root.querySelector(selector);
      $('.name').textContent = id;
      $('.name').id = key + '-name';
      root.setAttribute('aria-labelledby', key + '-name');
      root.dataset.camera = id;
      this.view = $('.view');
      this.stateLine = $('.state');
      this.message = $('.message');
      this.form = $('.configure');
      for (const field of root.querySelectorAll('.field')) {
        const input = field.querySelector('input');
        input.id = key + '-' + field.dataset.field;
        field.querySelector('label').htmlFor = input.id;
        field.querySelector('.field-error').id = input.id + '-error';
        input.setAttribute('aria-describedby', input.id + '-error');
      }
      for (const button of root.querySelectorAll('[data-action]')) {
        button.addEventListener('click', () => this.act(button.dataset.action, button));
      }
      const controls = $('.controls');
      controls.addEventListener('toggle', () => { if (controls.open) this.loadControls(); });
      const settings = $('.settings');
      settings.addEventListener('toggle', () => { if (settings.open) this.loadSettings(); });
      this.form.addEventListener('submit', event => { event.preventDefault(); this.configure(); });
      this.setViewOnly(viewOnly);
    }

    setViewOnly(on) {
      this.$('.control-list').disabled = on;
    }

    // A camera's status from /v1/cameras, or the state and reason of a camera_state event.
    update(status) {
      const was = this.status.state;
      this.status = status;
      const state = status.state || 'idle';
      if (state === 'running' && was !== 'running' && this.$('.controls').open) this.loadControls();
      this.stateLine.dataset.state = state;
      setText(this.$('.badge'), STATES[state] || state);
      let detail = '';
      if (state === 'running') {
        detail = [status.size, status.format, status.configured_fps && status.configured_fps + ' fps'].filter(Boolean).join(' · ');
      } else if (state === 'waiting-for-device') {
        detail = (status.reason || '') + ' camd opens it again when it is back.';
      } else if (state === 'failed') {
        detail = (status.reason || 'camd could not run it.') + (viewOnly ? '' : ' Fix that, then press Start camera.');
      } else if (state === 'idle') {
        detail = viewOnly ? 'Not capturing.' : 'Not capturing: press Start camera.';
      }
      setText(this.$('.detail'), detail.trim());
      if (status.size) {
        const [w, h] = status.size.split('x').map(Number);
        if (w && h) this.view.style.setProperty('--aspect', w + ' / ' + h);
      }
      const recording = status.video && status.video.recording;
      if (recording) this.recording = recording.state !== 'off';
      this.showButtons();
      this.showPlayer(state);
    }

    showButtons() {
      const state = this.status.state;
      const power = this.$('[data-action="power"]');
      const on = state === 'running' || state === 'starting' || state === 'waiting-for-device';
      setText(power, state === 'stopping' ? 'Stopping…' : on ? 'Stop camera' : 'Start camera');
      power.disabled = state === 'stopping';
      const record = this.$('[data-action="record"]');
      setText(record, this.recording ? 'Stop recording' : 'Start recording');
      if (this.recording) record.dataset.on = ''; else delete record.dataset.on;
    }

    // The live view plays while the camera runs (and on through a device that comes back);
    // a stopped camera gets none, since a viewer would start it again on demand.
    showPlayer(state) {
      const wanted = state === 'running' || state === 'starting' || (this.live && state === 'waiting-for-device');
      if (wanted && !this.live) {
        const live = this.live = document.getElementById('live-view').content.firstElementChild.cloneNode(true);
        live.dataset.camera = this.id;
        live.querySelector('video').setAttribute('aria-label', 'Live video of camera ' + this.id);
        live.querySelector('img').alt = 'Live video of camera ' + this.id;
        // After a stream ends: connect again only to a camera still on (a stopped one would start).
        live.camdMayConnect = async () => {
          await this.refresh();
          return this.live === live;
        };
        this.view.prepend(live);
        window.camdLiveStart(live);
      } else if (!wanted && this.live) {
        this.live.querySelector('img').removeAttribute('src');
        this.live.remove();
        this.live = null;
      }
      const placeholder = { idle: 'Camera stopped', failed: 'Camera failed', stopping: 'Stopping…', 'waiting-for-device': 'Waiting for the device…' };
      setText(this.$('.placeholder'), this.live ? '' : placeholder[state] || '');
    }

    // What an action did, or what went wrong, in the card's message line.
    say(parts, isError) {
      this.message.classList.toggle('error', !!isError);
      this.message.replaceChildren(...[].concat(parts));
    }

    async act(action, button) {
      button.disabled = true;
      try {
        if (action === 'snapshot') {
          this.photoSaved(await api('POST', this.path + '/snapshot'));
        } else if (action === 'record' && this.recording) {
          const answer = await api('POST', this.path + '/recordings/stop');
          this.recording = false;
          const saved = answer.saved || [];
          this.say(saved.length ? ['Recording saved: '].concat(...saved.map((file, i) => [i ? ', ' : '', mediaLink(file.name)]))
            : 'Recording stopped.');
        } else if (action === 'record') {
          await api('POST', this.path + '/recordings', {});
          this.recording = true;
          this.say('Recording…');
        } else if (action === 'power') {
          const on = ['running', 'starting', 'waiting-for-device'].includes(this.status.state);
          this.say(on ? 'Stopping the camera…' : 'Starting the camera…');
          this.update(await api('POST', this.path + (on ? '/stop' : '/start')));
          this.say(on ? 'Camera stopped.' : 'Camera started.');
        }
      } catch (error) {
        this.say(error.message, true);
      } finally {
        button.disabled = false;
        this.showButtons();
      }
    }

    photoSaved(photo) {
      this.say(['Photo saved: ', mediaLink(photo.name), ' (' + photo.width + '×' + photo.height + ', ' + size(photo.bytes) + ')']);
    }

    // ---- device controls: sliders, toggles, menus and buttons, each set with PUT

    async loadControls() {
      // The writer reads them all once its last PUT is answered.
      if (this.writingControls) return;
      const note = this.$('.controls-note');
      // The device's controls are there while it is open.
      if (this.status.state !== 'running') {
        this.showControls([]);
        return setText(note, 'The controls show while the camera runs.');
      }
      try {
        this.showControls(await api('GET', this.path + '/controls'));
        setText(note, this.controls.size ? '' : 'This camera has no controls.');
      } catch (error) {
        this.showControls([]);
        setText(note, error.message);
      }
    }

    // Every control (GET), or with `changed` only those a PUT answers with.
    showControls(list, changed) {
      const names = list.map(control => control.name).join(' ');
      const box = this.$('.control-list');
      if (changed) {
        list = list.filter(control => this.controls.has(control.name));
      } else if (names !== this.controlNames) {
        this.controlNames = names;
        this.controls.clear();
        box.replaceChildren(box.querySelector('legend'));
        for (const control of list) box.append(this.makeControl(control));
      }
      for (const control of list) this.showControl(control);
    }

    makeControl(control) {
      const id = this.root.id + '-control-' + control.name;
      const wrap = make('div', 'control');
      wrap.dataset.control = control.name;
      const label = make('label', '', control.label);
      label.htmlFor = id;
      const error = make('p', 'field-error');
      error.id = id + '-error';
      error.setAttribute('aria-live', 'polite');
      let input;
      const set = value => this.setControl(control.name, value, error);
      switch (control.type) {
        case 'integer':
        case 'integer64':
        case 'float': {
          input = make('input');
          input.type = 'range';
          input.min = control.minimum;
          input.max = control.maximum;
          // A real-number control (libcamera's Brightness, -1...1) moves in hundredths of its range.
          input.step = control.type === 'float' ? (control.maximum - control.minimum) / 100 || 'any' : control.step || 1;
          const output = make('output');
          output.htmlFor = id;
          input.addEventListener('input', () => setText(output, input.value));
          input.addEventListener('change', () => set(Number(input.value)));
          const row = make('div', 'row');
          row.append(input, output);
          wrap.append(label, row);
          break;
        }
        case 'boolean':
          input = make('input');
          input.type = 'checkbox';
          input.addEventListener('change', () => set(input.checked));
          wrap.classList.add('toggle');
          wrap.append(input, label);
          break;
        case 'menu':
        case 'intmenu':
          input = make('select');
          for (const [index, name] of Object.entries(control.menu || {}).sort((a, b) => a[0] - b[0])) {
            const option = make('option', '', name);
            option.value = index;
            input.append(option);
          }
          input.addEventListener('change', () => set(Number(input.value)));
          wrap.append(label, input);
          break;
        case 'button':
          input = make('button', '', control.label);
          input.type = 'button';
          input.addEventListener('click', () => set(1));
          wrap.append(input);
          break;
        default:
          input = make('output');
          wrap.append(label, input);
      }
      input.id = id;
      input.setAttribute('aria-describedby', error.id);
      wrap.append(error);
      this.controls.set(control.name, { wrap, input });
      return wrap;
    }

    showControl(control) {
      const { wrap, input } = this.controls.get(control.name);
      wrap.classList.toggle('inactive', !!control.inactive);
      input.disabled = !!control.read_only;
      if (control.value === null || control.value === undefined || document.activeElement === input && input.type === 'range') return;
      if (input.type === 'checkbox') input.checked = !!control.value;
      else if (input.tagName === 'OUTPUT' || input.tagName === 'BUTTON') { if (input.tagName === 'OUTPUT') setText(input, String(control.value)); }
      else input.value = String(control.value);
      const output = wrap.querySelector('.row output');
      if (output) setText(output, String(control.value));
    }

    // One PUT at a time, each with the newest value asked for: requests sent together
    // can reach camd in any order (a browser opens several connections), and the
    // device must end at the value the user last set, not at one overtaken on the way.
    setControl(name, value, error) {
      this.controlWrites.set(name, { value, error });
      if (!this.writingControls) this.writeControls();
    }

    async writeControls() {
      this.writingControls = true;
      while (this.controlWrites.size) {
        const [name, { value, error }] = this.controlWrites.entries().next().value;
        this.controlWrites.delete(name);
        try {
          const answer = await api('PUT', this.path + '/controls', { [name]: value });
          // A newer value of a control waiting to be sent stays on its slider.
          this.showControls(answer.filter(control => !this.controlWrites.has(control.name)), true);
          setText(error, '');
        } catch (failure) {
          setText(error, failure.message);
        }
      }
      this.writingControls = false;
      // A change can make others active or inactive (auto gain and gain): read them all again.
      this.loadControls();
    }

    // ---- capture settings: size, fps and quality through configure

    async loadSettings() {
      try {
        this.settings = (await api('GET', this.path)).settings;
        for (const name of ['size', 'fps', 'quality']) {
          const value = this.settings[name];
          this.form.elements[name].value = value === null || value === undefined ? '' : String(value);
        }
      } catch (error) {
        this.formMessage(error.message, true);
      }
    }

    formMessage(text, isError) {
      const line = this.form.querySelector('.form-message');
      line.classList.toggle('error', !!isError);
      setText(line, text);
    }

    fieldError(name, text) {
      const input = this.form.elements[name];
      setText(this.form.querySelector('#' + input.id + '-error'), text);
      if (text) input.setAttribute('aria-invalid', 'true'); else input.removeAttribute('aria-invalid');
    }

    async configure() {
      const body = {};
      const current = this.settings || {};
      for (const name of ['size', 'fps', 'quality']) {
        this.fieldError(name, '');
        const text = this.form.elements[name].value.trim();
        const number = Number(text);
        // Sent as typed: camd checks every value and says what it takes.
        const value = text === '' ? null : name === 'size' || !Number.isFinite(number) ? text : number;
        if (value !== (current[name] === undefined ? null : current[name])) body[name] = value;
      }
      const names = Object.keys(body);
      if (!names.length) return this.formMessage('Nothing to change.');
      this.formMessage('Applying…');
      try {
        const answer = await api('POST', this.path + '/configure', body);
        this.formMessage('Applied' + (answer.restart && answer.restart !== 'none' ? ' (restarted: ' + answer.restart + ').' : '.'));
        this.update(answer);
        this.loadSettings();
      } catch (error) {
        // The API names the field its message is about: "fps must be a number above 0 ...".
        const field = names.find(name => error.message.startsWith(name + ' ')) || (names.length === 1 ? names[0] : null);
        if (field) {
          this.formMessage('');
          this.fieldError(field, error.message);
          this.form.elements[field].focus();
        } else {
          this.formMessage(error.message, true);
        }
      }
    }

    async refresh() {
      try { this.update((await api('GET', this.path)).status); } catch (error) { /* the next poll or event tells */ }
    }

    remove() {
      this.showPlayer('idle');
      this.root.remove();
    }
  }

  // ---- every camera: the list, polled while the event stream is not there

  async function refreshAll() {
    let list;
    try {
      list = await api('GET', '/v1/cameras');
    } catch (error) {
      notice.hidden = false;
      setText(notice, 'Could not reach camd: ' + error.message + '. Trying again.');
      return;
    }
    main.setAttribute('aria-busy', 'false');
    const seen = new Set();
    for (const status of list) {
      seen.add(status.id);
      let card = cards.get(status.id);
      if (!card) {
        card = new Card(status.id);
        cards.set(status.id, card);
        main.append(card.root);
      }
      card.update(status);
    }
    for (const [id, card] of cards) {
      if (!seen.has(id)) { card.remove(); cards.delete(id); }
    }
    notice.hidden = list.length > 0;
    setText(notice, list.length ? '' : 'camd has no cameras. Add one to camd.toml (docs/configuration.md).');
  }

  function poll(on) {
    if (on && !poller) {
      poller = setInterval(() => { if (!document.hidden) refreshAll(); }, POLL_MS);
      setText(connection, 'Updating every ' + POLL_MS / 1000 + ' s');
    } else if (!on && poller) {
      clearInterval(poller);
      poller = null;
    }
  }

  function onEvent(source, type, handle) {
    source.addEventListener(type, event => {
      let data;
      try { data = JSON.parse(event.data); } catch (e) { return; }
      const card = cards.get(data.camera);
      if (card) handle(card, data); else refreshAll();
    });
  }

  // The event stream; on its error, polling until it opens again.
  function listen() {
    if (!window.EventSource) return poll(true);
    const source = new EventSource('/v1/events');
    source.addEventListener('open', () => {
      poll(false);
      setText(connection, 'Live updates');
      refreshAll();
    });
    source.addEventListener('error', () => {
      poll(true);
      // Closed for good (no such route, not an event stream): ask again later.
      if (source.readyState === EventSource.CLOSED) setTimeout(listen, EVENTS_RETRY_MS);
    });
    onEvent(source, 'camera_state', (card, data) => {
      card.update(Object.assign({}, card.status, { state: data.state, reason: data.reason }));
      card.refresh();
    });
    onEvent(source, 'photo_saved', (card, data) => card.photoSaved(data));
    onEvent(source, 'recording_started', (card, data) => {
      card.recording = true;
      card.showButtons();
      card.say(['Recording ', data.name, '…']);
    });
    onEvent(source, 'recording_finished', (card, data) => {
      card.recording = false;
      card.showButtons();
      const seconds = data.duration_seconds ? data.duration_seconds.toFixed(1) + ' s, ' : '';
      card.say(['Recording saved: ', mediaLink(data.name), ' (' + seconds + size(data.bytes || 0) + ')']);
    });
  }

  // What this sign-in may do; a camd without sign-in (404) allows everything.
  async function loadAccess() {
    try {
      viewOnly = (await api('GET', '/v1/session')).access === 'view';
    } catch (error) {
      viewOnly = false;
    }
    document.body.classList.toggle('view-only', viewOnly);
    document.getElementById('access').hidden = !viewOnly;
    for (const card of cards.values()) card.setViewOnly(viewOnly);
  }

  // The event stream and the live views were let in when they opened and make no new
  // requests, so a page signed out elsewhere (another tab, a restart of camd) would not
  // notice: a small request now and then does, and api() then reloads into the sign-in page.
  // A hidden tab asks when it is shown again.
  const checkSession = () => { if (!document.hidden) api('GET', '/v1/session').catch(() => {}); };
  setInterval(checkSession, SESSION_CHECK_MS);
  document.addEventListener('visibilitychange', checkSession);

  loadAccess().then(refreshAll).then(listen);
})();
