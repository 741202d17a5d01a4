"""A small harness driving Debian's headless Chromium through the Chrome DevTools Protocol, for
browser tests of easyplan's self-contained HTML report.

Only `websocket-client` (Debian's python3-websocket) and the standard library: no npm, no browser
download. One websocket to the browser target carries every page's traffic (flattened sessions),
and every command is synchronous, so events are handled while a command's answer is awaited.

    with Browser() as browser:
        page = browser.page
        page.open(pathlib.Path("report.html").as_uri())
        page.wait_for("document.body.dataset.ready === 'true'")
        page.type_into("#q", "llama")
        page.click("#b")
        assert not page.errors and not non_local_requests(page.requests)
        assert not png_is_blank(page.screenshot("report.png"))
"""
import base64
import collections
import itertools
import json
import os
import pathlib
import shutil
import signal
import struct
import subprocess
import tempfile
import time
import urllib.parse
import zlib

import websocket

CHROMIUM = "/usr/bin/chromium"
DEFAULT_TIMEOUT = 30.0

# Everything that would make a throwaway headless profile talk to the network or differ between
# runs is switched off; --no-sandbox because the tests run as root in a container.
CHROMIUM_FLAGS = (
    "--no-sandbox",
    "--headless=new",
    "--disable-gpu",
    "--remote-debugging-port=0",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-extensions",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--metrics-recording-only",
    "--mute-audio",
    "--hide-scrollbars",
)

LOCAL_SCHEMES = frozenset({"file", "data", "blob", "about"})

# Input.dispatchKeyEvent needs the DOM `key`, `code` and the legacy keyCode, and `text` for the
# keys that produce a character (without it Enter would not reach keypress or submit a form).
KEYS = {
    "Enter": {"key": "Enter", "code": "Enter", "windowsVirtualKeyCode": 13, "text": "\r"},
    "Tab": {"key": "Tab", "code": "Tab", "windowsVirtualKeyCode": 9},
    "Escape": {"key": "Escape", "code": "Escape", "windowsVirtualKeyCode": 27},
    "ArrowUp": {"key": "ArrowUp", "code": "ArrowUp", "windowsVirtualKeyCode": 38},
    "ArrowDown": {"key": "ArrowDown", "code": "ArrowDown", "windowsVirtualKeyCode": 40},
}


class BrowserError(RuntimeError):
    """Chromium failed to start, died, or answered a DevTools command with an error."""


class BrowserTimeout(BrowserError, TimeoutError):
    """A wait ran out of time (the browser did not hang the test: it was given up on)."""


class JavaScriptError(BrowserError):
    """An expression evaluated in the page threw."""


class Browser:
    """Headless Chromium with one page (`browser.page`); more through `new_page()`.

    A context manager: leaving it kills the browser's whole process group and removes its
    throwaway profile, whatever happened inside."""

    def __init__(self, binary=CHROMIUM, timeout=DEFAULT_TIMEOUT, window_size=(1280, 800)):
        self.binary = binary
        self.timeout = timeout
        self.window_size = window_size
        self.page = None
        self._process = None
        self._connection = None
        self._root = None  # the throwaway profile and Chromium's log

    def __enter__(self):
        try:
            self._root = pathlib.Path(tempfile.mkdtemp(prefix="easyplan-chromium-"))
            self._process = self._launch()
            self._connection = _Connection(self._devtools_url(), self.timeout, self._log_tail)
            self.page = self.new_page()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc_info):
        self.close()

    def new_page(self):
        """A fresh tab, attached on the shared connection."""
        call = self._connection.call
        target_id = call("Target.createTarget", {"url": "about:blank"}, timeout=self.timeout)["targetId"]
        session_id = call("Target.attachToTarget", {"targetId": target_id, "flatten": True},
                          timeout=self.timeout)["sessionId"]
        page = Page(self._connection, target_id, session_id, self.timeout)
        # --window-size sizes the window, and headless=new still takes its frame off the height
        # (1280x800 gives an 1280x713 viewport): the override makes the viewport exactly that.
        width, height = self.window_size
        page.send("Emulation.setDeviceMetricsOverride", {
            "width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})
        return page

    def close(self):
        asked = False
        if self._connection is not None:
            # Asked first, so that Chromium reaps its own helpers and finishes writing the profile
            # before it is removed; the kill below is for a browser that did not comply, or that
            # could not be asked (it never listened).
            asked = self._connection.close_browser()
            self._connection = None
        if self._process is not None:
            _end_process_group(self._process, grace=5 if asked else 0)
            self._process = None
        if self._root is not None:
            shutil.rmtree(self._root, ignore_errors=True)
            self._root = None

    def _launch(self):
        profile = self._root / "profile"
        profile.mkdir()
        width, height = self.window_size
        args = [self.binary, *CHROMIUM_FLAGS, f"--user-data-dir={profile}",
                f"--window-size={width},{height}", "about:blank"]
        # Chromium's stderr is chatty (D-Bus is absent in a container): a file rather than a pipe,
        # so that nobody has to drain it, and its tail can explain a failure. A session of its own,
        # so that the renderer and helper processes are killed with the browser.
        with open(self._root / "chromium.log", "wb") as log:
            return subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                    stderr=log, start_new_session=True)

    def _devtools_url(self):
        """The browser target's websocket URL, once Chromium has written where it listens."""
        port_file = self._root / "profile" / "DevToolsActivePort"
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            url = _url_from_port_file(port_file) or _url_from_log(self._root / "chromium.log")
            if url:
                return url
            if self._process.poll() is not None:
                raise BrowserError(f"{self.binary} exited with {self._process.returncode} before "
                                   f"listening for DevTools:\n{self._log_tail()}")
            time.sleep(0.05)
        raise BrowserTimeout(f"{self.binary} did not listen for DevTools within {self.timeout} s:\n"
                             f"{self._log_tail()}")

    def _log_tail(self, lines=20):
        try:
            text = (self._root / "chromium.log").read_text(errors="replace")
        except (OSError, TypeError):
            return "(no Chromium log)"
        return "\n".join(text.splitlines()[-lines:])


class Page:
    """One tab. Records what a self-contained page must not do: `requests` holds every URL it
    requested, `errors` every console error, uncaught exception and error log entry."""

    def __init__(self, connection, target_id, session_id, timeout=DEFAULT_TIMEOUT):
        self.target_id = target_id
        self.session_id = session_id
        self.timeout = timeout
        self.requests = []
        self.errors = []
        self._connection = connection
        self._loaded = False
        connection.listen(session_id, self._on_event)

    def send(self, method, params=None, timeout=None):
        """A raw DevTools command on this page's session; its result."""
        return self._connection.call(method, params, self.session_id, timeout or self.timeout)

    def open(self, url, timeout=None):
        """Navigates to `url` and returns once its load event fired."""
        for domain in ("Page", "Runtime", "Network", "Log"):
            self.send(f"{domain}.enable")
        # Cleared only now: a late load event of the previous document must not end this wait.
        self._loaded = False
        result = self.send("Page.navigate", {"url": url})
        if result.get("errorText"):
            raise BrowserError(f"could not open {url}: {result['errorText']}")
        self._connection.wait_until(lambda: self._loaded, timeout or self.timeout,
                                    f"the load event of {url}")

    def evaluate(self, expression, timeout=None):
        """The value of a JavaScript expression (promises awaited), as JSON-compatible Python."""
        result = self.send("Runtime.evaluate", {
            "expression": expression, "returnByValue": True, "awaitPromise": True,
            "userGesture": True}, timeout)
        if "exceptionDetails" in result:
            raise JavaScriptError(f"{expression!r} threw: {_exception_text(result['exceptionDetails'])}")
        value = result.get("result", {})
        return value.get("value")  # absent for undefined, and for what JSON cannot hold (NaN)

    def wait_for(self, expression, timeout=None, interval=0.05):
        """Polls `expression` until it is truthy; its value. An expression that throws ends the
        wait (JavaScriptError): guard lookups that may not exist yet (`el && el.ready`)."""
        timeout = timeout or self.timeout
        deadline = time.monotonic() + timeout
        while True:
            value = self.evaluate(expression, timeout)
            if value:
                return value
            if time.monotonic() >= deadline:
                raise BrowserTimeout(f"{expression!r} still {value!r} after {timeout} s")
            # Sleeping through the connection so the page's events are still recorded meanwhile.
            self._connection.pump(min(interval, max(0.0, deadline - time.monotonic())))

    def click(self, selector):
        """A real left click (pointer events, focus, default actions) at the element's centre."""
        x, y = self._centre(selector)
        common = {"x": x, "y": y, "button": "left", "clickCount": 1}
        self.send("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": x, "y": y})
        self.send("Input.dispatchMouseEvent", {"type": "mousePressed", **common})
        self.send("Input.dispatchMouseEvent", {"type": "mouseReleased", **common})

    def type_into(self, selector, text):
        """Focuses the element, caret at the end, and inserts `text` as typing would: the page
        sees beforeinput and input events (but no key events)."""
        found = self.evaluate(f"""(() => {{
            const el = document.querySelector({json.dumps(selector)});
            if (!el) return false;
            el.focus();
            // Typing appends, whatever focus() did with the caret; types without one (number) throw.
            try {{ el.setSelectionRange(el.value.length, el.value.length); }} catch (e) {{}}
            return document.activeElement === el;
        }})()""")
        if not found:
            raise BrowserError(f"{selector!r} matches no focusable element")
        self.send("Input.insertText", {"text": text})

    def press_key(self, key):
        """Presses and releases one of KEYS on the focused element."""
        if key not in KEYS:
            raise ValueError(f"unknown key {key!r}: one of {', '.join(KEYS)}")
        params = KEYS[key]
        # keyDown with text also makes the char/keypress event; rawKeyDown is a bare key press.
        self.send("Input.dispatchKeyEvent", {"type": "keyDown" if "text" in params else "rawKeyDown", **params})
        self.send("Input.dispatchKeyEvent", {"type": "keyUp", **{k: v for k, v in params.items() if k != "text"}})

    def set_dark_mode(self, dark):
        """Emulates prefers-color-scheme: dark (True) or light (False)."""
        self.send("Emulation.setEmulatedMedia", {
            "features": [{"name": "prefers-color-scheme", "value": "dark" if dark else "light"}]})

    def screenshot(self, path=None):
        """A PNG of the whole page (not only the viewport); written to `path` when given."""
        metrics = self.send("Page.getLayoutMetrics")
        # cssContentSize is in CSS pixels, as the clip must be; contentSize is its older name.
        size = metrics.get("cssContentSize") or metrics["contentSize"]
        clip = {"x": 0, "y": 0, "width": max(1, size["width"]), "height": max(1, size["height"]),
                "scale": 1}
        result = self.send("Page.captureScreenshot", {
            "format": "png", "captureBeyondViewport": True, "clip": clip})
        png = base64.b64decode(result["data"])
        if path is not None:
            pathlib.Path(path).write_bytes(png)
        return png

    def close(self):
        self._connection.forget(self.session_id)
        self._connection.call("Target.closeTarget", {"targetId": self.target_id},
                              timeout=self.timeout)

    def _centre(self, selector):
        box = self.evaluate(f"""(() => {{
            const el = document.querySelector({json.dumps(selector)});
            if (!el) return null;
            el.scrollIntoView({{block: "center", inline: "center"}});
            const r = el.getBoundingClientRect();
            const x = r.left + r.width / 2, y = r.top + r.height / 2;
            const hit = document.elementFromPoint(x, y);
            return {{x, y, width: r.width, height: r.height,
                     covered: !(hit && (el === hit || el.contains(hit))),
                     hit: hit ? hit.outerHTML.slice(0, 80) : null}};
        }})()""")
        if box is None:
            raise BrowserError(f"{selector!r} matches no element")
        if box["width"] <= 0 or box["height"] <= 0:
            raise BrowserError(f"{selector!r} is not rendered (its box is {box['width']}x{box['height']})")
        if box["covered"]:
            # The click would land on another element, which is never what a test means.
            raise BrowserError(f"{selector!r} is covered at its centre by {box['hit']}")
        return box["x"], box["y"]

    def _on_event(self, method, params):
        if method == "Page.loadEventFired":
            self._loaded = True
        elif method == "Network.requestWillBeSent":
            self.requests.append(params["request"]["url"])
        elif method == "Runtime.consoleAPICalled" and params["type"] in ("error", "assert"):
            text = " ".join(_remote_object_text(arg) for arg in params.get("args", []))
            self.errors.append(f"console.{params['type']}: {text}")
        elif method == "Runtime.exceptionThrown":
            self.errors.append(f"uncaught: {_exception_text(params['exceptionDetails'])}")
        elif method == "Log.entryAdded" and params["entry"]["level"] == "error":
            entry = params["entry"]
            where = f" ({entry['url']})" if entry.get("url") else ""
            self.errors.append(f"log ({entry['source']}): {entry['text']}{where}")


class _Connection:
    """The browser's DevTools websocket: synchronous commands, events handed to the listener of
    their session while a command's answer (or a condition) is awaited."""

    def __init__(self, url, timeout, log_tail):
        self._log_tail = log_tail
        self._ids = itertools.count(1)
        self._listeners = {}
        # Chromium refuses websockets whose Origin header it was not told to allow
        # (--remote-allow-origins); websocket-client sends one unless suppressed.
        self._ws = websocket.create_connection(url, timeout=timeout, suppress_origin=True)

    def listen(self, session_id, listener):
        self._listeners[session_id] = listener

    def forget(self, session_id):
        self._listeners.pop(session_id, None)

    def call(self, method, params=None, session_id=None, timeout=DEFAULT_TIMEOUT):
        message_id = next(self._ids)
        message = {"id": message_id, "method": method, "params": params or {}}
        if session_id:
            message["sessionId"] = session_id
        self._send(message)
        deadline = time.monotonic() + timeout
        while True:
            message = self._receive(deadline, f"the answer to {method}")
            if message.get("id") == message_id:
                if "error" in message:
                    raise BrowserError(f"{method} failed: {message['error'].get('message')} "
                                       f"{message['error'].get('data', '')}".rstrip())
                return message.get("result", {})
            self._dispatch(message)

    def wait_until(self, condition, timeout, what):
        deadline = time.monotonic() + timeout
        while not condition():
            self._dispatch(self._receive(deadline, what))

    def pump(self, seconds):
        """Handles the events that arrive within `seconds`."""
        deadline = time.monotonic() + seconds
        try:
            while True:
                self._dispatch(self._receive(deadline, "events"))
        except BrowserTimeout:
            pass

    def close_browser(self):
        """Asks the browser to exit and closes the socket; whether the browser agreed."""
        try:
            self.call("Browser.close", timeout=2)
            agreed = True
        except BrowserError:  # already gone, or hung: it is killed next anyway
            agreed = False
        try:
            self._ws.close(timeout=1)
        except Exception:  # the socket may be dead already, which is what closing wanted
            pass
        return agreed

    def _send(self, message):
        try:
            self._ws.send(json.dumps(message))
        except (websocket.WebSocketException, OSError) as error:
            raise BrowserError(f"lost the browser ({error}):\n{self._log_tail()}") from error

    def _receive(self, deadline, what):
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise BrowserTimeout(f"timed out waiting for {what}")
        self._ws.settimeout(remaining)
        try:
            return json.loads(self._ws.recv())
        except websocket.WebSocketTimeoutException:
            raise BrowserTimeout(f"timed out waiting for {what}") from None
        except (websocket.WebSocketException, OSError) as error:
            raise BrowserError(f"lost the browser waiting for {what} ({error}):\n"
                               f"{self._log_tail()}") from error

    def _dispatch(self, message):
        listener = self._listeners.get(message.get("sessionId"))
        if listener is not None and "method" in message:
            listener(message["method"], message.get("params", {}))


def non_local_requests(urls):
    """The URLs that leave the machine: a self-contained page must request none."""
    return [url for url in urls if urllib.parse.urlsplit(url).scheme.lower() not in LOCAL_SCHEMES]


def png_is_blank(png, tolerance=0.005):
    """True when (nearly) every pixel has one colour: fewer than `tolerance` of them differ from
    the most common one. Catches a report that rendered nothing (blank page, unstyled crash)."""
    width, height, channels, rows = decode_png(png)
    counts = collections.Counter()
    for row in rows:
        first = row[:channels]
        # Screenshots are mostly rows of background: counted whole, without slicing pixels.
        if row == first * width:
            counts[first] += width
        else:
            counts.update(row[i:i + channels] for i in range(0, len(row), channels))
    total = width * height
    return total == 0 or total - counts.most_common(1)[0][1] < tolerance * total


_CHANNELS = {0: 1, 2: 3, 4: 2, 6: 4}  # grey, RGB, grey+alpha, RGBA (not palettes)


def decode_png(png):
    """(width, height, channels, the unfiltered rows as bytes) of an 8-bit, non-interlaced PNG."""
    if png[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    header, data, offset = None, [], 8
    while offset < len(png):
        length, kind = struct.unpack(">I4s", png[offset:offset + 8])
        body = png[offset + 8:offset + 8 + length]
        offset += 12 + length  # length, type, body, CRC
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            data.append(body)
        elif kind == b"IEND":
            break
    if header is None:
        raise ValueError("PNG without IHDR")
    width, height, depth, colour, _, _, interlace = header
    if depth != 8 or colour not in _CHANNELS or interlace:
        raise ValueError(f"unsupported PNG: bit depth {depth}, colour type {colour}, interlace {interlace}")
    channels = _CHANNELS[colour]
    raw = zlib.decompress(b"".join(data))
    stride = width * channels
    rows, previous = [], bytes(stride)
    for y in range(height):
        start = y * (stride + 1)
        filtered = raw[start + 1:start + 1 + stride]
        if len(filtered) != stride:
            raise ValueError("truncated PNG data")
        previous = _unfilter(raw[start], filtered, previous, channels)
        rows.append(previous)
    return width, height, channels, rows


def _unfilter(kind, line, up, bpp):
    """One scanline with PNG filter `kind` undone; `up` is the previous, unfiltered one."""
    if kind == 0:  # None
        return bytes(line)
    if kind == 2:  # Up: no dependency along the row, so no Python-level loop over it
        return bytes((a + b) & 0xFF for a, b in zip(line, up))
    if kind == 1:  # Sub: each channel is a running sum of its own bytes
        out = bytearray(len(line))
        for c in range(bpp):
            out[c::bpp] = bytes(itertools.accumulate(line[c::bpp], lambda a, b: (a + b) & 0xFF))
        return bytes(out)
    out = bytearray(line)
    if kind == 3:  # Average
        for i in range(len(out)):
            left = out[i - bpp] if i >= bpp else 0
            out[i] = (out[i] + ((left + up[i]) >> 1)) & 0xFF
        return bytes(out)
    if kind == 4:  # Paeth
        for i in range(len(out)):
            if i < bpp:
                out[i] = (out[i] + up[i]) & 0xFF  # no left neighbours: Paeth picks `up`
                continue
            a, b, c = out[i - bpp], up[i], up[i - bpp]
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            predictor = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
            out[i] = (out[i] + predictor) & 0xFF
        return bytes(out)
    raise ValueError(f"unknown PNG filter type {kind}")


def _url_from_port_file(port_file):
    """ws://127.0.0.1:<port><path> once Chromium has written both lines of DevToolsActivePort."""
    try:
        lines = port_file.read_text().splitlines()
    except OSError:
        return None
    if len(lines) < 2 or not lines[0].strip().isdigit() or not lines[1].startswith("/devtools/"):
        return None  # not yet, or half written
    return f"ws://127.0.0.1:{lines[0].strip()}{lines[1].strip()}"


def _url_from_log(log_path):
    try:
        text = log_path.read_text(errors="replace")
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith("DevTools listening on ws://"):
            return line.split(" on ", 1)[1].strip()
    return None


def _end_process_group(process, grace):
    """Waits up to `grace` seconds for the browser to exit, then kills what is left of its group."""
    if grace:
        try:
            process.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            pass
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:  # the whole group is gone already
        pass
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass  # not even SIGKILL ended it (a process stuck in the kernel): nothing more to do


def _exception_text(details):
    # An Error's description already holds its message and stack; a thrown non-Error (throw "x")
    # has only the generic text ("Uncaught") and its value, so the location is added then.
    exception = details.get("exception") or {}
    if exception.get("className") and exception.get("description"):
        return exception["description"]
    text = details.get("text", "exception")
    value = _remote_object_text(exception) if exception else ""
    where = f" at {details['url']}:{details.get('lineNumber', 0) + 1}" if details.get("url") else ""
    return f"{text} {value}".strip() + where


def _remote_object_text(remote):
    if "value" in remote:
        value = remote["value"]
        return value if isinstance(value, str) else json.dumps(value)
    return remote.get("unserializableValue") or remote.get("description") or remote.get("type", "?")
