"""mkdocs hook (mkdocs.yml ``hooks:``): the repository's pictures on the pages, and the link to the repository.

**Pictures kept outside docs/.** A page shows a committed picture (``benchmarks/results/*/curves.png``)
by its path relative to the page in the repository, the link that also works where the Markdown is
read as it is (a forge, an editor)::

    ![Run 7's curves](../../benchmarks/results/card_net/curves.png)   (from docs/experiments/)

mkdocs serves only ``docs/``. This hook rewrites every image link that leads out of ``docs/`` to a
file of the repository into ``repo/<its path in the repository>`` and adds that file to the site,
copied at build time: nothing is duplicated in git. A link that leads out of the repository, or to
no file, is a warning, so ``mkdocs build --strict`` fails on it.

**The repository link** (the theme's header): ``repo_url`` of mkdocs.yml when it is set; otherwise
``$PCR_REPO_URL``; otherwise the forge's CI variables (GitHub Actions, GitLab CI); otherwise the
checkout's ``git remote get-url origin`` (``git@host:owner/name.git`` read as
``https://host/owner/name``). With none of them the site has no repository link rather than a
made-up one.
"""

from __future__ import annotations

import logging
import os
import posixpath
import re
import subprocess
from pathlib import Path
from urllib.parse import urlsplit

from mkdocs.structure.files import File

log = logging.getLogger("mkdocs.hooks.repo_files")
ROOT = Path(__file__).resolve().parents[2]
PREFIX = "repo/"
# ![alt](target) or ![alt](target "title"); the target may be written <target>. Code (a fenced block, an
# inline `span`) matches first and is left as it is.
IMAGE = re.compile(r'(?P<code>^[ \t]*(?P<fence>```+|~~~+).*?^[ \t]*(?P=fence)|(?P<ticks>`+).+?(?P=ticks))'
                   r'|(!\[[^\]]*\]\()\s*<?([^)\s>]+)>?((?:\s+"[^"]*")?\s*\))', re.M | re.S)


def _remote_url() -> str:
    """The repository's web address from the environment or git; "" when none is known."""
    if os.environ.get("PCR_REPO_URL"):
        return os.environ["PCR_REPO_URL"]
    if os.environ.get("GITHUB_SERVER_URL") and os.environ.get("GITHUB_REPOSITORY"):
        return f"{os.environ['GITHUB_SERVER_URL']}/{os.environ['GITHUB_REPOSITORY']}"
    if os.environ.get("CI_PROJECT_URL"):
        return os.environ["CI_PROJECT_URL"]
    try:
        url = subprocess.run(["git", "remote", "get-url", "origin"], cwd=ROOT, capture_output=True,
                             text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""
    ssh = re.fullmatch(r"(?:ssh://)?[\w.-]+@([\w.-]+)[:/](.+?)(?:\.git)?/?", url)
    if ssh:
        return f"https://{ssh.group(1)}/{ssh.group(2)}"
    parts = urlsplit(url)
    if parts.scheme in ("http", "https") and parts.netloc:
        netloc = parts.netloc.rsplit("@", 1)[-1]  # never a token or user name from the remote
        return f"{parts.scheme}://{netloc}{parts.path.removesuffix('.git').rstrip('/')}"
    return ""


def on_config(config, **kwargs):
    if not config.repo_url:
        url = _remote_url()
        if url:
            config.repo_url = url
            config.repo_name = config.repo_name or urlsplit(url).path.strip("/") or url
    return config


def on_page_markdown(markdown, page, config, files, **kwargs):
    docs_dir = Path(config.docs_dir).resolve()
    page_dir = Path(page.file.abs_src_path).parent
    page_uri_dir = posixpath.dirname(page.file.src_uri)

    def rewrite(match: re.Match) -> str:
        if match.group("code"):
            return match.group(0)
        opening, target, closing = match.group(4, 5, 6)
        if urlsplit(target).scheme or target.startswith(("/", "#")):
            return match.group(0)
        path = (page_dir / target).resolve()
        if path.is_relative_to(docs_dir):
            return match.group(0)  # an ordinary docs/ file: mkdocs checks it
        if not path.is_relative_to(ROOT) or not path.is_file():
            log.warning("%s: the image %s is no file of the repository", page.file.src_uri, target)
            return match.group(0)
        uri = PREFIX + path.relative_to(ROOT).as_posix()
        if files.get_file_from_path(uri) is None:
            files.append(File.generated(config, uri, abs_src_path=str(path)))
        return f"{opening}{posixpath.relpath(uri, page_uri_dir or '.')}{closing}"

    return IMAGE.sub(rewrite, markdown)
