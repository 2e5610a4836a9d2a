"""The browser table (``python -m agents.serve``): a person plays agents in a web page, every action kept.

:mod:`agents.web.table` is one table (the game, its agents and its action log; no web library),
:mod:`agents.web.store` keeps tables on disk and finished games in ``--records DIR``,
:mod:`agents.web.app` is the Starlette app (the page and its JSON API);
``python evaluate.py --people DIR`` (:mod:`agents.evaluation.people`) summarises a records folder
(the person's results against each agent spec).
Only :mod:`agents.web.app` needs the ``web`` extra (starlette, uvicorn).
"""
