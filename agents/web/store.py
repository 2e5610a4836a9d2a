"""Tables on disk: each action is saved (as a ``pcr-replay`` record) before a request is answered; finished games archived.

``TABLES/<id>.json`` is the table's record so far; its ``meta.table`` holds the settings, the SHA-256
of the table's token (never the token) and the action log that :meth:`Table.restore` replays, so a
server restart continues every table. A finished game is also written to ``RECORDS/<time>-<id>.json``
(the agents' specs and the seed are in its ``meta``) and ``RECORDS/index.html``, the replay viewer
with every record there, is rebuilt. Each table has its own lock: tables never wait for one another.

>>> import tempfile
>>> store = TableStore(tempfile.mkdtemp(), tempfile.mkdtemp())
>>> tid, token = store.create(TableSettings(agents=["heuristic"] * 4, seed=1, episode="round"))
>>> store.check(tid, token) and not store.check(tid, "guess")
True
>>> TableStore(store.tables_dir, store.records_dir).with_table(tid, lambda t: t.turn()) == store.with_table(tid, lambda t: t.turn())
True
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from agents.web.table import Table, TableSettings
from pcr_env.replay import SCHEMA, VIEWER_FILE, load_replays, write_viewer

T = TypeVar("T")
TABLE_ID = re.compile(r"^[A-Za-z0-9_-]{22}$")  # secrets.token_urlsafe(16): 128 random bits


class UnknownTable(KeyError):
    """No table has this id (or the id is not one this server could have made)."""


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def write_json(path: Path, obj: Any) -> None:
    """Write ``obj`` to ``path`` atomically (a temporary file, flushed to disk, then renamed over it)."""
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w") as f:
        json.dump(obj, f, separators=(",", ":"))
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


class _Entry:
    def __init__(self, table: Table, meta: dict[str, Any]):
        self.table, self.meta, self.lock = table, meta, threading.Lock()


class TableStore:
    """Tables by id, kept in ``tables_dir``; at most ``live`` of them rebuilt in memory at once (least recently used go)."""

    def __init__(self, tables_dir: str | Path, records_dir: str | Path, live: int = 64):
        self.tables_dir, self.records_dir = Path(tables_dir), Path(records_dir)
        self.tables_dir.mkdir(parents=True, exist_ok=True)
        self.live = live
        self._entries: OrderedDict[str, _Entry] = OrderedDict()
        self._lock = threading.Lock()

    def create(self, settings: TableSettings) -> tuple[str, str]:
        """A new table saved to disk; returns ``(id, token)``. The token is shown once: only its hash is kept."""
        table = Table(settings)
        tid, token = secrets.token_urlsafe(16), secrets.token_urlsafe(32)
        meta = {"id": tid, "token_sha256": _digest(token), "settings": settings.to_dict(), "created": time.time(),
                "status": "playing", "archived": None}
        entry = _Entry(table, meta)
        self._save(entry)
        with self._lock:
            self._remember(tid, entry)
        return tid, token

    def exists(self, tid: str) -> bool:
        return bool(TABLE_ID.match(tid or "")) and (tid in self._entries or self._path(tid).is_file())

    def check(self, tid: str, token: str | None) -> bool:
        """Whether ``token`` is this table's (compared in constant time); raises :class:`UnknownTable`."""
        entry = self._entry(tid)
        return bool(token) and hmac.compare_digest(_digest(token), entry.meta["token_sha256"])

    def with_table(self, tid: str, fn: Callable[[Table], T], *, save: bool = False, then: Callable[[Table], T] | None = None) -> T:
        """``fn(table)`` under the table's lock; with ``save``, the record is written after ``fn`` returns
        (and archived once the game is over), then ``then(table)`` is returned if given. If ``fn`` raises,
        nothing is written."""
        entry = self._entry(tid)
        with entry.lock:
            out = fn(entry.table)
            if save:
                self._save(entry)
            return then(entry.table) if then is not None else out

    def meta(self, tid: str) -> dict[str, Any]:
        return dict(self._entry(tid).meta)

    # ------------------------------------------------------------------ disk
    def _path(self, tid: str) -> Path:
        return self.tables_dir / f"{tid}.json"

    def _remember(self, tid: str, entry: _Entry) -> None:
        self._entries[tid] = entry
        self._entries.move_to_end(tid)
        while len(self._entries) > self.live:
            old, e = next(iter(self._entries.items()))
            if e.lock.locked():
                break
            del self._entries[old]

    def _entry(self, tid: str) -> _Entry:
        if not isinstance(tid, str) or not TABLE_ID.match(tid):
            raise UnknownTable(tid)
        with self._lock:
            entry = self._entries.get(tid)
            if entry is not None:
                self._entries.move_to_end(tid)
                return entry
            path = self._path(tid)
            if not path.is_file():
                raise UnknownTable(tid)
            record = json.loads(path.read_text())
            if record.get("schema") != SCHEMA or "table" not in record.get("meta", {}):
                raise ValueError(f"{path} is not a table record")
            meta = record["meta"]["table"]
            actions = meta.pop("actions")
            entry = _Entry(Table.restore(TableSettings.from_dict(meta["settings"]), actions), meta)
            self._remember(tid, entry)
            return entry

    def _save(self, entry: _Entry) -> None:
        table = entry.table
        record = table.record()
        if table.over():
            entry.meta["status"] = "finished"
        record["meta"]["table"] = dict(entry.meta, actions=list(table.actions), updated=time.time())
        write_json(self._path(entry.meta["id"]), record)
        if table.over() and entry.meta["archived"] is None:
            entry.meta["archived"] = str(self._archive(record, entry.meta))
            record["meta"]["table"]["archived"] = entry.meta["archived"]
            write_json(self._path(entry.meta["id"]), record)

    def _archive(self, record: dict[str, Any], meta: dict[str, Any]) -> Path:
        """The finished game in the records folder (no token hash there), and the folder's viewer rebuilt."""
        self.records_dir.mkdir(parents=True, exist_ok=True)
        kept = json.loads(json.dumps(record))
        kept["meta"]["table"] = {k: v for k, v in kept["meta"]["table"].items() if k != "token_sha256"}
        path = self.records_dir / f"{time.strftime('web-%Y%m%d-%H%M%S')}-{meta['id'][:8]}.json"
        write_json(path, kept)
        loaded = load_replays(self.records_dir)
        write_viewer([r for _, r in loaded], self.records_dir / VIEWER_FILE, title="Pass Cut Run: games in the browser",
                     names=[name for name, _ in loaded])
        return path
