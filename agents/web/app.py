"""The Starlette app of the browser table: the page and a small JSON API, every bad request a clear 4xx JSON answer.

Routes (``{id}`` is a table id; every ``/api/tables/{id}...`` call needs the table's token in the
``X-PCR-Token`` header, which only the page that made the table holds, in its ``localStorage``):

=======================================  ===========================================================
``GET /``                                the lobby: a new table, or one this browser already holds
``GET /t/{id}``                          the table's page
``POST /api/tables``                     a new table (``{"episode": "game" | "round"}``) -> ``{id, token, url}``
``GET /api/tables/{id}``                 what the person may see (:meth:`Table.view`)
``POST /api/tables/{id}/move``           the person's action ``{"action": id}``, saved before the answer
``POST /api/tables/{id}/advance``        the agent to act plays once, saved before the answer
``GET /api/tables/{id}/hint``            what the hint agent would play, with its probabilities if it has them
``GET /api/tables/{id}/replay``          the finished game in the replay viewer (HTML)
=======================================  ===========================================================

Answers: 400 malformed JSON or fields, 401 no token, 403 a wrong token, 404 an unknown table or
path, 405 a wrong method, 409 not now (not your turn, the game is over), 413 a body over
``MAX_BODY`` bytes, 415 not JSON, 422 an illegal move, 500 an agent that failed (its message; the
table is unchanged). Requests whose ``Host`` is not the server's are refused (400): a page of
another site cannot reach a server on 127.0.0.1 by DNS rebinding.
"""

from __future__ import annotations

import json
import logging
import secrets
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from agents.registry import make_agent
from agents.web.store import TableStore, UnknownTable
from agents.web.table import AgentFailed, IllegalMove, MoveError, Table, TableSettings
from pcr_env.replay import viewer_html, with_table_look

MAX_BODY = 4096
PAGE = Path(__file__).with_name("page.html")
LOCAL_HOSTS = ["127.0.0.1", "localhost", "[::1]", "::1"]
log = logging.getLogger("agents.serve")


@dataclass
class ServeConfig:
    """The server's settings: every table gets ``agents`` (one spec per seat; the person's is ignored)."""

    agents: list[str]
    seat: int = 0
    episode: str = "game"
    seed: int | None = None
    rules: dict[str, Any] = field(default_factory=dict)
    hint: str | None = "heuristic"
    tables_dir: str | Path = "runs/web/tables"
    records_dir: str | Path = "runs/web/records"
    allowed_hosts: list[str] = field(default_factory=lambda: list(LOCAL_HOSTS))

    def settings(self, episode: str | None = None) -> TableSettings:
        seed = self.seed if self.seed is not None else secrets.randbelow(2**31)
        return TableSettings(agents=list(self.agents), seat=self.seat, seed=seed, episode=episode or self.episode,
                             rules=dict(self.rules), hint=self.hint)


def _fail(status: int, message: str) -> HTTPException:
    return HTTPException(status, detail=message)


async def _http_error(request: Request, exc: HTTPException) -> JSONResponse:
    messages = {404: "not found", 405: f"method {request.method} is not allowed here"}
    detail = exc.detail if exc.detail and exc.detail not in ("Not Found", "Method Not Allowed") else messages.get(exc.status_code)
    return JSONResponse({"error": detail or "bad request", "status": exc.status_code}, exc.status_code, headers=exc.headers)


async def _server_error(request: Request, exc: Exception) -> JSONResponse:
    log.error("internal error on %s %s: %r", request.method, request.url.path, exc)
    return JSONResponse({"error": f"internal error ({type(exc).__name__}); the table is unchanged", "status": 500}, 500)


async def _json_body(request: Request) -> dict[str, Any]:
    """The request's JSON object, read up to ``MAX_BODY`` bytes (413 past it, 415 if not JSON, 400 if malformed)."""
    if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
        raise _fail(415, "send the request body as JSON (Content-Type: application/json)")
    size = request.headers.get("content-length")
    if size is not None and (not size.isdigit() or int(size) > MAX_BODY):
        raise _fail(413, f"the request body is larger than {MAX_BODY} bytes")
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_BODY:
            raise _fail(413, f"the request body is larger than {MAX_BODY} bytes")
    try:
        data = json.loads(body or b"{}")
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise _fail(400, "the request body is not valid JSON") from None
    if not isinstance(data, dict):
        raise _fail(400, "the request body must be a JSON object")
    return data


class _Handlers:
    """The endpoints of one app: a :class:`TableStore`, the hint agents and the page template."""

    def __init__(self, config: ServeConfig):
        self.config, self.store = config, TableStore(config.tables_dir, config.records_dir)
        specs = {s for i, s in enumerate(config.agents) if i != config.seat} | ({config.hint} if config.hint else set())
        for spec in specs:
            make_agent(spec, seed=0, rules=config.settings().config())  # fail at start, not at the first table
        self.hint_agents: dict[str, Any] = {}
        self.hint_lock = threading.Lock()  # one hint agent per spec, shared by the tables
        self.page = with_table_look(PAGE.read_text())

    # ------------------------------------------------------------- helpers
    def table_id(self, request: Request, authorised: bool = True) -> str:
        """The path's table id, checked: 404 unknown, 401 no token, 403 a wrong token (unless not ``authorised``).
        Run in a worker thread: the first call after a restart rebuilds the table from its file."""
        tid = request.path_params["tid"]
        try:
            if not authorised:
                if not self.store.exists(tid):
                    raise UnknownTable(tid)
                return tid
            token = request.headers.get("x-pcr-token")
            if not token:
                raise _fail(401, "this table needs its token (X-PCR-Token): open it from the page that made it")
            if not self.store.check(tid, token):
                raise _fail(403, "wrong token for this table: only the page that made it can play there")
        except UnknownTable:
            raise _fail(404, "unknown table: no table has this id") from None
        return tid

    def state(self, tid: str, table: Table) -> dict[str, Any]:
        meta = self.store.meta(tid)
        return dict(table.view(), id=tid, hint_agent=meta["settings"].get("hint"), archived=meta.get("archived"))

    async def locked(self, tid: str, fn, save: bool = False):
        """``fn(table)`` in a worker thread under the table's lock; with ``save``, the saved table's state."""
        def run():
            try:
                return self.store.with_table(tid, fn, save=save, then=(lambda t: self.state(tid, t)) if save else None)
            except IllegalMove as err:
                raise _fail(422, str(err)) from None
            except MoveError as err:  # not now: not this seat's turn, the game is over
                raise _fail(409, str(err)) from None
            except AgentFailed as err:
                raise _fail(500, f"{err} -- the table and its record are unchanged; try again or start a new table") from None
        return await run_in_threadpool(run)

    def html(self, table: str | None) -> HTMLResponse:
        c = self.config
        boot = {"table": table, "agents": c.agents, "seat": c.seat, "episode": c.episode, "hint": c.hint}
        data = json.dumps(boot).replace("<", "\\u003c")
        return HTMLResponse(self.page.replace("__BOOT__", data), headers={"Cache-Control": "no-store"})

    # ------------------------------------------------------------ endpoints
    async def lobby(self, request: Request) -> Response:
        return self.html(None)

    async def table_page(self, request: Request) -> Response:
        return self.html(await run_in_threadpool(self.table_id, request, False))

    async def favicon(self, request: Request) -> Response:
        return Response(status_code=204)

    async def new_table(self, request: Request) -> Response:
        body = await _json_body(request)
        episode = body.get("episode", self.config.episode)
        if episode not in ("game", "round"):
            raise _fail(400, f"episode {episode!r} is not allowed: allowed 'game' or 'round'")
        tid, token = await run_in_threadpool(self.store.create, self.config.settings(episode))
        return JSONResponse({"id": tid, "token": token, "url": f"/t/{tid}"}, 201)

    async def get_state(self, request: Request) -> Response:
        tid = await run_in_threadpool(self.table_id, request)
        return JSONResponse(await self.locked(tid, lambda t: self.state(tid, t)))

    async def move(self, request: Request) -> Response:
        tid = await run_in_threadpool(self.table_id, request)
        body = await _json_body(request)
        action = body.get("action")
        if isinstance(action, bool) or not isinstance(action, int):
            raise _fail(400, 'send {"action": ID} with an integer action id (the page\'s buttons carry them)')

        def play(t: Table) -> None:
            if t.turn() != t.seat:
                raise MoveError("it is not your turn" if not t.over() else "the game is over: start a new table")
            t.apply(action)
        return JSONResponse(await self.locked(tid, play, save=True))

    async def advance(self, request: Request) -> Response:
        tid = await run_in_threadpool(self.table_id, request)
        await _json_body(request)

        def step(t: Table) -> None:
            if t.turn() == t.seat:
                raise MoveError("it is your turn: the agents wait for you")
            t.agent_step()
        return JSONResponse(await self.locked(tid, step, save=True))

    async def hint(self, request: Request) -> Response:
        tid = await run_in_threadpool(self.table_id, request)
        spec = self.store.meta(tid)["settings"].get("hint")
        if not spec:
            raise _fail(409, "this server gives no hints (started with --hint none)")

        def ask(t: Table) -> dict[str, Any]:
            with self.hint_lock:
                agent = self.hint_agents.get(spec) or self.hint_agents.setdefault(spec, make_agent(spec, seed=0, rules=t.config))
                return dict(t.hint(agent), agent=spec)
        return JSONResponse(await self.locked(tid, ask))

    async def replay(self, request: Request) -> Response:
        tid = await run_in_threadpool(self.table_id, request)

        def record(t: Table) -> dict[str, Any]:
            if not t.over():
                raise MoveError("the replay opens once the game is over (it shows every hand)")
            return t.record()
        rec = await self.locked(tid, record)
        return HTMLResponse(viewer_html([rec], title="Pass Cut Run: your game", names=[tid]))


def create_app(config: ServeConfig) -> Starlette:
    """The app for ``config``; tables live in ``config.tables_dir`` and survive a restart."""
    h = _Handlers(config)
    routes = [
        Route("/", h.lobby, methods=["GET"]),
        Route("/favicon.ico", h.favicon, methods=["GET"]),
        Route("/t/{tid}", h.table_page, methods=["GET"]),
        Route("/api/tables", h.new_table, methods=["POST"]),
        Route("/api/tables/{tid}", h.get_state, methods=["GET"]),
        Route("/api/tables/{tid}/move", h.move, methods=["POST"]),
        Route("/api/tables/{tid}/advance", h.advance, methods=["POST"]),
        Route("/api/tables/{tid}/hint", h.hint, methods=["GET"]),
        Route("/api/tables/{tid}/replay", h.replay, methods=["GET"]),
    ]
    middleware = [Middleware(TrustedHostMiddleware, allowed_hosts=config.allowed_hosts)]
    app = Starlette(routes=routes, middleware=middleware,
                    exception_handlers={HTTPException: _http_error, Exception: _server_error})
    app.state.store, app.state.config = h.store, config
    return app


__all__ = ["MAX_BODY", "ServeConfig", "create_app"]
