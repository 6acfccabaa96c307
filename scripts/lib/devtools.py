"""Headless Chromium driven over the DevTools protocol: the one DevTools client the
browser checks share (scripts/browser-checks.py, scripts/live-view-checks.py).

Chromium speaks the protocol on a pair of pipes (--remote-debugging-pipe: it reads
commands from fd 3 and writes answers and events to fd 4, each message JSON ended by
a NUL), so this needs nothing beyond the standard library and no port: it runs on a
bare host and inside the test VMs alike.

    browser = Chromium(workdir, window=(800, 600))
    page = browser.new_page()
    page.open("http://127.0.0.1:8080/cameras/cam/live")
    page.evaluate("document.title")
    png = page.screenshot()
    page.console_errors()      # console.error, logged errors, uncaught exceptions
    browser.close()
"""
import base64
import json
import os
import re
import shutil
import signal
import threading
import time


class DevToolsError(RuntimeError):
    pass


class Chromium:
    """A headless Chromium process and its DevTools pipe.

    Events are kept in arrival order (`events`), each a dict with "method", "params"
    and, for a page's events, its "sessionId"; answers to commands are matched by id.
    `timeout` bounds every wait: raise it where the machine is slow (an emulated VM).
    """

    def __init__(self, workdir, window=(800, 600), args=(), timeout=60):
        binary = shutil.which("chromium") or shutil.which("chromium-browser")
        if not binary:
            raise DevToolsError("chromium is not installed (scripts/install-test-deps browser, or apt-get install chromium)")
        self.timeout = timeout
        self.window = window
        self.profile = os.path.join(workdir, "chromium")
        self.log_path = os.path.join(workdir, "chromium.log")
        os.makedirs(self.profile, exist_ok=True)
        commands_in, self._commands = os.pipe()   # we write, Chromium reads on fd 3
        self._answers, answers_out = os.pipe()    # Chromium writes on fd 4, we read
        argv = [binary, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
                "--no-default-browser-check", "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--mute-audio", "--disable-dev-shm-usage", "--password-store=basic", "--use-mock-keychain",
                f"--window-size={window[0]},{window[1]}", "--remote-debugging-pipe",
                f"--user-data-dir={self.profile}", *args, "about:blank"]
        # Chromium writes its caches and crash reports under HOME: give it the scratch folder
        # (in the VM the real HOME is read-only).
        env = dict(os.environ, HOME=self.profile)
        self.pid = os.posix_spawn(binary, argv, env, file_actions=[
            (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
            (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
            (os.POSIX_SPAWN_OPEN, 2, self.log_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644),
            (os.POSIX_SPAWN_DUP2, commands_in, 3),
            (os.POSIX_SPAWN_DUP2, answers_out, 4),
        ])
        os.close(commands_in)
        os.close(answers_out)
        self.exit_status = None
        self.events = []
        self._answered = {}
        self._next_id = 0
        self._changed = threading.Condition()
        self._closed = False
        threading.Thread(target=self._read, daemon=True).start()
        self.version = self.command("Browser.getVersion")

    def _read(self):
        pending = b""
        while True:
            try:
                data = os.read(self._answers, 1 << 16)
            except OSError:
                data = b""
            if not data:
                with self._changed:
                    self._closed = True
                    self._changed.notify_all()
                return
            pending += data
            *messages, pending = pending.split(b"\0")
            with self._changed:
                for raw in messages:
                    message = json.loads(raw)
                    if "id" in message:
                        self._answered[message["id"]] = message
                    else:
                        self.events.append(message)
                self._changed.notify_all()

    def command(self, method, session=None, timeout=None, **params):
        """Sends a command (to the page of `session`, or to the browser) and returns its result."""
        with self._changed:
            self._next_id += 1
            ident = self._next_id
        message = {"id": ident, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        os.write(self._commands, json.dumps(message).encode() + b"\0")
        deadline = time.time() + (timeout or self.timeout)
        with self._changed:
            while ident not in self._answered:
                if self._closed:
                    raise DevToolsError(f"{method}: Chromium closed its DevTools pipe (log: {self.log_path})")
                if not self._changed.wait(deadline - time.time()) and time.time() >= deadline:
                    raise DevToolsError(f"{method}: no answer within {timeout or self.timeout} s")
            answer = self._answered.pop(ident)
        if "error" in answer:
            raise DevToolsError(f"{method}: {answer['error'].get('message')} {answer['error'].get('data', '')}".strip())
        return answer.get("result", {})

    def wait_event(self, method, session=None, after=0, timeout=None):
        """The first event `method` (of `session`) at index `after` or later in `events`."""
        deadline = time.time() + (timeout or self.timeout)
        with self._changed:
            while True:
                for event in self.events[after:]:
                    if event.get("method") == method and (session is None or event.get("sessionId") == session):
                        return event
                if self._closed:
                    raise DevToolsError(f"waiting for {method}: Chromium closed its DevTools pipe (log: {self.log_path})")
                if not self._changed.wait(deadline - time.time()) and time.time() >= deadline:
                    raise DevToolsError(f"no {method} within {timeout or self.timeout} s")

    def new_page(self):
        """A new tab, attached, with its page, runtime and log events enabled, its viewport
        the window's size at one device pixel per CSS pixel (so screenshots are that size)."""
        target = self.command("Target.createTarget", url="about:blank")["targetId"]
        session = self.command("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        page = Page(self, session, target)
        for domain in ("Page.enable", "Runtime.enable", "Log.enable"):
            page.command(domain)
        page.command("Emulation.setDeviceMetricsOverride", width=self.window[0], height=self.window[1],
                     deviceScaleFactor=1, mobile=False)
        return page

    def close(self):
        try:
            self.command("Browser.close", timeout=10)
        except DevToolsError:
            pass
        deadline = time.time() + 10
        while self.exit_status is None and time.time() < deadline:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.exit_status = status
            else:
                time.sleep(0.1)
        if self.exit_status is None:
            os.kill(self.pid, signal.SIGKILL)
            self.exit_status = os.waitpid(self.pid, 0)[1]
        for fd in (self._commands, self._answers):
            try:
                os.close(fd)
            except OSError:
                pass


class Page:
    """One tab of a `Chromium`, by its DevTools session."""

    def __init__(self, browser, session, target=None):
        self.browser = browser
        self.session = session
        self.target = target
        self.first_event = len(browser.events)

    def close(self):
        """Closes the tab: its streams and event streams end with it."""
        if self.target:
            self.browser.command("Target.closeTarget", targetId=self.target)

    def command(self, method, timeout=None, **params):
        return self.browser.command(method, session=self.session, timeout=timeout, **params)

    def events(self, *methods):
        """This page's events of the given kinds so far, oldest first."""
        return [e for e in self.browser.events[self.first_event:]
                if e.get("sessionId") == self.session and e.get("method") in methods]

    def open(self, url, timeout=None):
        """Navigates and waits for the load event."""
        mark = len(self.browser.events)
        answer = self.command("Page.navigate", url=url)
        if answer.get("errorText"):
            raise DevToolsError(f"{url}: {answer['errorText']}")
        self.browser.wait_event("Page.loadEventFired", session=self.session, after=mark, timeout=timeout)

    def evaluate(self, expression, timeout=None):
        """Runs JavaScript in the page, awaiting a promise; returns its value."""
        result = self.command("Runtime.evaluate", timeout=timeout, expression=expression, awaitPromise=True,
                              returnByValue=True)
        if "exceptionDetails" in result:
            details = result["exceptionDetails"]
            text = details.get("exception", {}).get("description") or details.get("text")
            raise DevToolsError(f"{expression[:80]}: {text}")
        return result["result"].get("value")

    def wait_for(self, expression, timeout=None, step=0.25):
        """The value of `expression` once it is truthy; None after `timeout` s."""
        deadline = time.time() + (timeout or self.browser.timeout)
        while True:
            try:
                # Each try gets a few seconds: an evaluation sent while the page navigates
                # can be answered late or never (its context is gone), and the next try
                # runs in the new page.
                value = self.evaluate(expression, timeout=max(1.0, min(5.0, deadline - time.time())))
            except DevToolsError:
                if time.time() >= deadline:
                    raise
                value = None
            if value or time.time() >= deadline:
                return value or None
            time.sleep(step)

    def screenshot(self, timeout=None):
        """The page as PNG bytes."""
        return base64.b64decode(self.command("Page.captureScreenshot", timeout=timeout, format="png")["data"])

    def console_errors(self, provoked=()):
        """What the page reported as an error: console.error/assert calls, errors the browser
        logged (failed loads, security policy refusals) and uncaught exceptions, as text lines.
        `provoked`: (status, end of the URL's path) of failed loads a check caused on purpose (a refused
        request Chromium logs as a failed load), left out."""
        lines = []
        for event in self.events("Runtime.consoleAPICalled", "Log.entryAdded", "Runtime.exceptionThrown"):
            method, params = event["method"], event["params"]
            if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                lines.append("console." + params["type"] + ": "
                             + " ".join(str(a.get("value", a.get("description", ""))) for a in params.get("args", [])))
            elif method == "Log.entryAdded" and params["entry"].get("level") == "error":
                entry = params["entry"]
                lines.append(f"log ({entry.get('source')}): {entry.get('text')} {entry.get('url', '')}".strip())
            elif method == "Runtime.exceptionThrown":
                details = params["exceptionDetails"]
                lines.append("exception: " + (details.get("exception", {}).get("description") or details.get("text", "")))
        return [line for line in lines if not _provoked(line, provoked)]


def _provoked(line, provoked):
    """Whether `line` is Chromium's log of a failed load of one of `provoked`'s (status, end of
    the URL's path: its query is not looked at)."""
    found = re.search(r"status of (\d+) .*? (\S+)$", line)
    return (line.startswith("log (network): Failed to load resource") and found is not None
            and any(int(found.group(1)) == status and found.group(2).split("?")[0].endswith(end) for status, end in provoked))
