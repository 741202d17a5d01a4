"""Tests of the browser harness itself (browser.py), on a static fixture page, so that a failing
report test can be trusted to be about the report."""
import os
import pathlib
import struct
import zlib

import pytest

CHROMIUM = "/usr/bin/chromium"
if not os.path.exists(CHROMIUM):
    pytest.skip(f"{CHROMIUM} is missing (apt-get install chromium)", allow_module_level=True)

from browser import (Browser, BrowserError, BrowserTimeout, JavaScriptError, decode_png,  # noqa: E402
                     non_local_requests, png_is_blank)

SELFTEST = pathlib.Path(__file__).resolve().parent / "fixtures" / "selftest.html"


@pytest.fixture(scope="module")
def browser():
    # One browser for the module (it takes about half a second to start), a fresh tab per test.
    with Browser(binary=CHROMIUM) as b:
        yield b


@pytest.fixture
def page(browser):
    tab = browser.new_page()
    yield tab
    tab.close()


@pytest.fixture
def selftest(page):
    page.open(SELFTEST.as_uri())
    page.wait_for("document.body.dataset.ready === 'true'")
    return page


def hits(page):
    return page.evaluate("[...document.querySelectorAll('#hits li.hit')].map(li => li.textContent)")


def test_typing_and_clicking_change_the_dom(selftest):
    selftest.type_into("#q", "mi")
    assert selftest.evaluate("document.getElementById('q').value") == "mi"
    assert selftest.evaluate("document.body.dataset.inputs") == "1", "insertText fires one input event"
    assert hits(selftest) == []
    selftest.click("#b")
    assert hits(selftest) == ["mistral", "mixtral"]
    selftest.type_into("#q", "x")  # appended at the caret, not replacing
    selftest.click("#b")
    assert hits(selftest) == ["mistral", "mixtral", "mixtral"]


def test_a_self_contained_page_requests_nothing_and_logs_no_error(selftest):
    selftest.type_into("#q", "a")
    selftest.click("#b")
    assert selftest.requests == [SELFTEST.as_uri()]  # recorded, and local
    assert non_local_requests(selftest.requests) == []
    assert selftest.errors == []


def test_keys_carry_key_code_and_key_code(selftest):
    selftest.type_into("#q", "qw")
    selftest.press_key("Enter")
    assert selftest.evaluate("document.body.dataset.lastKey") == "Enter|Enter|13"
    assert hits(selftest) == ["qwen"]
    selftest.press_key("ArrowDown")
    assert selftest.evaluate("document.body.dataset.lastKey") == "ArrowDown|ArrowDown|40"
    selftest.press_key("Tab")
    assert selftest.evaluate("document.body.dataset.lastKey") == "Tab|Tab|9"
    assert selftest.evaluate("document.activeElement.id") == "b", "Tab moves the focus"
    with pytest.raises(ValueError):
        selftest.press_key("F13")


def test_missing_elements_are_errors(selftest):
    with pytest.raises(BrowserError, match="matches no element"):
        selftest.click("#absent")
    with pytest.raises(BrowserError, match="matches no focusable element"):
        selftest.type_into("#absent", "x")


def test_evaluate_returns_values_and_raises_what_the_page_throws(selftest):
    assert selftest.evaluate("({a: [1, 'b', null]})") == {"a": [1, "b", None]}
    assert selftest.evaluate("new Promise(r => setTimeout(() => r(42), 10))") == 42
    with pytest.raises(JavaScriptError, match="kaboom"):
        selftest.evaluate("(() => { throw new Error('kaboom'); })()")
    assert selftest.errors == [], "an evaluate's exception is the caller's, not the page's"


def test_wait_for_gives_up_with_a_clear_error(selftest):
    selftest.evaluate("setTimeout(() => { document.body.dataset.later = 'yes'; }, 100)")
    assert selftest.wait_for("document.body.dataset.later", timeout=5) == "yes"
    with pytest.raises(BrowserTimeout, match="never"):
        selftest.wait_for("window.never", timeout=0.3)


def test_dark_mode_is_emulated(selftest):
    background = "getComputedStyle(document.body).backgroundColor"
    selftest.set_dark_mode(True)
    assert selftest.evaluate("matchMedia('(prefers-color-scheme: dark)').matches") is True
    assert selftest.evaluate(background) == "rgb(13, 17, 23)"
    selftest.set_dark_mode(False)
    assert selftest.evaluate("matchMedia('(prefers-color-scheme: dark)').matches") is False
    assert selftest.evaluate(background) == "rgb(255, 255, 255)"


def test_screenshot_covers_the_page_and_is_not_blank(selftest, tmp_path):
    selftest.evaluate("document.body.style.minHeight = '2000px'")  # taller than the viewport
    path = tmp_path / "selftest.png"
    png = selftest.screenshot(path)
    assert path.read_bytes() == png
    width, height, _, _ = decode_png(png)
    assert (width, height) == (1280, 2000)
    assert not png_is_blank(png)


def test_uncaught_exceptions_and_console_errors_are_recorded(page, tmp_path):
    broken = tmp_path / "broken.html"
    broken.write_text("<!DOCTYPE html><p>broken</p><script>console.error('bad', 7);"
                      "console.assert(1 === 2, 'asserted');"
                      "throw new Error('boom');</script>")
    page.open(broken.as_uri())
    page.wait_for("document.readyState === 'complete'")
    assert any("boom" in error and error.startswith("uncaught") for error in page.errors), page.errors
    assert "console.error: bad 7" in page.errors
    assert "console.assert: asserted" in page.errors


def test_remote_requests_are_recorded(page, tmp_path):
    remote = tmp_path / "remote.html"
    remote.write_text('<!DOCTYPE html><p>remote</p><script src="http://example.invalid/x.js"></script>')
    page.open(remote.as_uri())
    assert non_local_requests(page.requests) == ["http://example.invalid/x.js"]
    assert any("example.invalid" in error for error in page.errors), page.errors  # the failed load


def test_non_local_requests_keeps_only_what_leaves_the_machine():
    urls = ["file:///tmp/r.html", "data:image/png;base64,AAAA", "blob:file:///1234", "about:blank",
            "https://cdn.example.com/d3.js", "http://example.invalid/x.js", "ws://localhost:1/"]
    assert non_local_requests(urls) == urls[4:]


def test_the_browser_is_gone_after_the_context_even_on_error():
    with pytest.raises(RuntimeError, match="inside"):
        with Browser(binary=CHROMIUM) as b:
            process, root = b._process, b._root
            raise RuntimeError("inside")
    assert process.poll() is not None
    assert not root.exists()


# ---- PNG decoding, on images built here with zlib and struct -------------------------------------

def png_bytes(rows, colour_type, filters=(0,)):
    """A PNG of `rows` (lists of pixel tuples), row y filtered with filters[y % len(filters)]."""
    channels = {2: 3, 6: 4}[colour_type]
    width, height = len(rows[0]), len(rows)
    raw, previous = bytearray(), bytes(width * channels)
    for y, row in enumerate(rows):
        line = bytes(value for pixel in row for value in pixel)
        kind = filters[y % len(filters)]
        raw.append(kind)
        raw += filter_line(kind, line, previous, channels)
        previous = line

    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    header = struct.pack(">IIBBBBB", width, height, 8, colour_type, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(bytes(raw)))
            + chunk(b"IEND", b""))


def filter_line(kind, line, up, bpp):
    def paeth(a, b, c):
        p = a + b - c
        pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
        return a if pa <= pb and pa <= pc else (b if pb <= pc else c)

    out = bytearray()
    for i, x in enumerate(line):
        a = line[i - bpp] if i >= bpp else 0
        c = up[i - bpp] if i >= bpp else 0
        predictor = [0, a, up[i], (a + up[i]) // 2, paeth(a, up[i], c)][kind]
        out.append((x - predictor) & 0xFF)
    return bytes(out)


def noisy_rows(width, height, channels):
    return [[tuple((x * 37 + y * 91 + c * 53 + x * y) % 256 for c in range(channels))
             for x in range(width)] for y in range(height)]


@pytest.mark.parametrize("colour_type,channels", [(2, 3), (6, 4)])
def test_decode_png_undoes_all_five_filters(colour_type, channels):
    rows = noisy_rows(17, 15, channels)
    _, _, got_channels, decoded = decode_png(png_bytes(rows, colour_type, filters=(0, 1, 2, 3, 4)))
    assert got_channels == channels
    assert decoded == [bytes(value for pixel in row for value in pixel) for row in rows]


@pytest.mark.parametrize("colour_type,white", [(2, (255, 255, 255)), (6, (255, 255, 255, 255))])
def test_png_is_blank_on_synthetic_images(colour_type, white):
    blank = [[white] * 200 for _ in range(100)]
    assert png_is_blank(png_bytes(blank, colour_type, filters=(0, 1, 2, 3, 4)))
    speck = [row[:] for row in blank]
    speck[50][100] = (255, 0, 0, 255)[:len(white)]  # 1 pixel in 20,000: still blank
    assert png_is_blank(png_bytes(speck, colour_type))
    drawn = [row[:] for row in blank]
    for y in range(10, 20):
        drawn[y][10:30] = [(0, 0, 0, 255)[:len(white)]] * 20  # 1%: not blank
    assert not png_is_blank(png_bytes(drawn, colour_type, filters=(4,)))
