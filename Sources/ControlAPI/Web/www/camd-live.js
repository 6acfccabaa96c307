// The live view's script, served at `/assets/camd-live.js`: plays a camera's H.264
// (`/v1/cameras/{id}/video`) through Media Source Extensions, and falls back to the MJPEG
// stream where the browser cannot. Plain JavaScript shipped inside camd: no build step,
// no CDN, nothing fetched from outside, so it works on a machine that is offline.
//
// It keeps the picture at the live edge (a tab that was in the background, or a slow
// network, jumps forward rather than playing old frames), trims what it has played so
// memory stays flat, and connects again after an ended stream (a camera stopped or
// reconfigured) with a growing pause. `window.camdLive[camera]` tells tests and people
// what it does: `mode` ("mse", "mjpeg"), `state` and the last `error`.
// `window.camdLiveStart(view)` starts a view added later (the page of every camera, camd.js);
// a view taken out of the page stops: it neither reads on nor connects again. A page that
// knows the camera was stopped sets `view.camdMayConnect` (async, false: do not connect
// again), since connecting would start it again on demand.
'use strict';
(function () {
  const H264 = 'video/mp4; codecs="avc1.42E01E"';
  window.camdLive = window.camdLive || {};

  function start(view) {
    const camera = view.dataset.camera;
    const path = '/v1/cameras/' + encodeURIComponent(camera);
    const video = view.querySelector('video');
    const image = view.querySelector('img');
    const note = view.querySelector('.status');
    const info = window.camdLive[camera] = { mode: null, state: 'starting', error: null, connects: 0 };
    let pause = 500;

    function say(state, error) {
      info.state = state;
      if (error) info.error = String(error);
      note.textContent = state === 'playing' ? '' : (error ? state + ': ' + error : state);
    }

    function mjpeg() {
      info.mode = 'mjpeg';
      video.hidden = true;
      image.hidden = false;
      image.onload = () => say('playing');
      image.onerror = () => {
        if (!view.isConnected) return;
        say('reconnecting', 'the MJPEG stream ended');
        setTimeout(async () => { if (await mayConnect()) mjpeg(); else say('stopped'); }, pause);
      };
      image.src = path + '/stream?t=' + Date.now();
    }

    async function h264() {
      info.mode = 'mse';
      info.connects += 1;
      const source = new MediaSource();
      video.src = URL.createObjectURL(source);
      await new Promise(done => source.addEventListener('sourceopen', done, { once: true }));
      const response = await fetch(path + '/video', { cache: 'no-store' });
      if (!response.ok) {
        let message = response.status + ' ' + response.statusText;
        try { message = (await response.json()).error.message; } catch (e) { /* not JSON */ }
        throw new Error(message);
      }
      const type = response.headers.get('Content-Type');
      if (!MediaSource.isTypeSupported(type)) { response.body.cancel(); return 'unsupported'; }
      const buffer = source.addSourceBuffer(type);
      // Frames follow each other as they come; a client that skipped frames has no gap to stall on.
      buffer.mode = 'sequence';
      const pending = [];
      let trimmed = 0;
      const pump = () => {
        if (buffer.updating || source.readyState !== 'open') return;
        const played = video.currentTime;
        if (played - trimmed > 20) { trimmed = played - 5; buffer.remove(0, trimmed); return; }
        if (!pending.length) return;
        const size = pending.reduce((sum, chunk) => sum + chunk.length, 0);
        const bytes = new Uint8Array(size);
        let at = 0;
        for (const chunk of pending.splice(0)) { bytes.set(chunk, at); at += chunk.length; }
        buffer.appendBuffer(bytes);
      };
      buffer.addEventListener('updateend', () => {
        const ranges = video.buffered;
        if (ranges.length) {
          const end = ranges.end(ranges.length - 1);
          // At the start, or more than half a second behind: go to the newest frame.
          if (video.currentTime < ranges.start(0) || end - video.currentTime > 0.5) video.currentTime = Math.max(ranges.start(0), end - 0.05);
          if (video.paused) video.play().catch(() => {});
        }
        pump();
      });
      const reader = response.body.getReader();
      say('playing');
      pause = 500;
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return 'ended';
        if (!view.isConnected) { reader.cancel(); return 'removed'; }
        pending.push(value);
        pump();
      }
    }

    async function mayConnect() {
      if (!view.isConnected) return false;
      try { return !view.camdMayConnect || await view.camdMayConnect(); } catch (e) { return true; }
    }

    async function run() {
      if (view.dataset.mode === 'mjpeg' || !window.MediaSource || !MediaSource.isTypeSupported(H264)) return mjpeg();
      for (;;) {
        let outcome;
        try {
          outcome = await h264();
        } catch (error) {
          say('reconnecting', error.message || error);
        }
        if (outcome === 'unsupported') return mjpeg();
        if (outcome === 'ended') say('reconnecting', 'the stream ended');
        await new Promise(done => setTimeout(done, pause));
        pause = Math.min(pause * 2, 5000);
        if (!(await mayConnect())) return say('stopped');
      }
    }

    video.addEventListener('error', () => say('error', video.error && video.error.message));
    run();
  }

  window.camdLiveStart = start;
  document.querySelectorAll('.camd-live').forEach(start);
})();
