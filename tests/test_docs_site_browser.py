"""The documentation site in a real browser: built with ``mkdocs build --strict``, served on 127.0.0.1,
every page opened in headless Chromium.

Each page must load (no request of the site answered with an error, no error of the page's own
scripts), and every ``<img>`` on it must have loaded (``naturalWidth > 0``): the training curves kept
under ``benchmarks/results/`` reach the site through ``docs/hooks/repo_files.py``, and a broken path
shows here. The header must link the repository (the build is given ``PCR_REPO_URL``). A screenshot
of a page with pictures is saved to ``$PCR_ARTIFACTS`` (default ``artifacts/``).

The same needs and skip rule as tests/test_replay_browser.py: Debian's ``chromium`` and
``chromium-driver``, selenium (the ``browser`` extra) and mkdocs (the ``docs`` extra); without them
the browser test skips with the reason, except in CI (``CI=true``), where it fails. The check that
every picture a page names is shown on it needs none of them.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import re
import subprocess
import sys
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from conftest import IN_CI
from test_replay_browser import _missing, artifacts_dir, start_chromium

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
REPO_URL = "https://example.org/pcr-docs-check/pcr"
IMAGE = re.compile(r"!\[[^\]]*\]\(\s*<?([^)\s>]+)>?")
NAMED_PICTURE = re.compile(r"`((?:benchmarks|docs)/[^`\s]+\.(?:png|svg|jpg|gif))`")
CODE = re.compile(r"^[ \t]*(```+|~~~+).*?^[ \t]*\1|(`+).+?\2", re.M | re.S)  # fenced blocks, inline spans


def test_every_picture_a_page_names_is_shown_on_it():
    """A page that names a committed picture (`benchmarks/results/.../curves.png`) also shows it as an image."""
    pages = sorted(p for p in DOCS.rglob("*.md") if "hooks" not in p.relative_to(DOCS).parts)
    shown_anywhere = 0
    for page in pages:
        text = page.read_text(encoding="utf-8")
        shown = {(page.parent / target).resolve().relative_to(ROOT).as_posix()
                 for target in IMAGE.findall(CODE.sub("", text)) if "://" not in target}
        for path in shown:
            assert (ROOT / path).is_file(), f"{page.relative_to(ROOT)} shows {path}, which is no file"
        missing = sorted(set(NAMED_PICTURE.findall(text)) - shown)
        assert not missing, f"{page.relative_to(ROOT)} names {missing} but does not show them as images"
        shown_anywhere += len(shown)
    assert shown_anywhere >= 14  # the curves of the runs behind the shipped files, the table, the viewer


class _Handler(SimpleHTTPRequestHandler):
    errors: list[str]

    def log_request(self, code="-", size="-"):
        if str(code).isdigit() and int(code) >= 400:
            self.errors.append(f"{code} {self.path}")

    def log_message(self, *args):  # quiet
        pass


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """(base URL, site directory, server errors): the site built --strict and served on 127.0.0.1."""
    missing = _missing() + ([] if importlib.util.find_spec("mkdocs") else ["mkdocs (pip install -e '.[docs]')"])
    if missing:
        reason = "the docs site's browser test needs " + "; ".join(missing)
        if IN_CI:
            pytest.fail(reason + " -- CI=true, so this is a failure, not a skip (see .ci/run)", pytrace=False)
        pytest.skip(reason)
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "PCR_REPO_URL": REPO_URL, "NO_MKDOCS_2_WARNING": "1"}
    build = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
                           cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert build.returncode == 0, f"mkdocs build --strict failed:\n{build.stdout[-2000:]}\n{build.stderr[-3000:]}"
    errors: list[str] = []
    handler = type("Handler", (_Handler,), {"errors": errors})
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(handler, directory=str(out)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/", out, errors
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def driver(site, tmp_path_factory):
    drv = start_chromium(tmp_path_factory)
    yield drv
    drv.quit()


# Resolves once every <img> of the page has finished loading or failed; then each one's src and naturalWidth.
IMAGES_JS = """
const done = arguments[arguments.length - 1];
const imgs = Array.from(document.images);
Promise.all(imgs.map(img => img.complete ? null : new Promise(r => { img.onload = img.onerror = r; })))
  .then(() => done(imgs.map(img => [img.currentSrc || img.src, img.naturalWidth])));
"""


def test_every_page_loads_with_its_images(site, driver):
    base, out, server_errors = site
    pages = sorted(p.parent.relative_to(out).as_posix() for p in out.rglob("index.html"))
    pages = ["" if p == "." else p + "/" for p in pages]
    assert len(pages) >= len(list(DOCS.rglob("*.md"))) - 1, pages  # every Markdown page became a page
    problems, image_count = [], 0
    for page in pages:
        driver.get(base + page)
        if driver.execute_script("return document.readyState") != "complete" or not driver.find_elements(
                "css selector", "article.md-content__inner h1"):
            problems.append(f"{page}: did not load (no article heading)")
            continue
        for src, width in driver.execute_async_script(IMAGES_JS):
            image_count += 1
            if not width:
                problems.append(f"{page}: image {src} did not load")
        own = [e["message"] for e in driver.get_log("browser") if e.get("level") == "SEVERE" and base in e["message"]]
        problems += [f"{page}: {message}" for message in own]
        links = [a.get_attribute("href") for a in driver.find_elements("css selector", "a.md-source")]
        if REPO_URL not in links:
            problems.append(f"{page}: no link to the repository in the header ({links})")
    assert not problems, "\n".join(problems)
    assert not server_errors, server_errors  # a stylesheet, script or picture the site asked for and lacks
    assert image_count >= 14  # the committed curves, the rgb_array table and the replay viewer

    driver.get(base + "experiments/time-to-strength/")
    driver.execute_async_script(IMAGES_JS)
    driver.execute_script("document.querySelector('article img').scrollIntoView()")
    path = artifacts_dir() / "docs_site_curves.png"
    driver.save_screenshot(str(path))
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
