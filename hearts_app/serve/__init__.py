"""``hearts serve``: Hearts in the browser against the project's agents, and agents as a web service.

A FastAPI application (``app.create_app``) served by uvicorn (``hearts_app.commands.serve``):

* ``app``: the app put together from ``limits`` (the bounds on a request before it is parsed),
  ``schemas`` (the request bodies and their one check) and ``routes`` (the page, the games API and
  the bots API, one ``APIRouter`` each);
* ``games``: web games, each a :class:`hearts_app.session.match.Match` (the one engine) with its
  opponents' agents (``agents.make``), played on through ``Match.play_agents`` (the shared play
  loop), saved as a play record after every change and resumed from it after a restart;
* ``view``: what the human (seat 0) may see of a game, as JSON: a whitelist, never another hand;
* ``bots``: the bots-as-a-service endpoints (``/api/v1/agents``, ``/api/v1/act`` on seat records);
* ``replicas``: ``hearts serve --backend ray``, the bots API on Ray Serve replicas (``docs/cluster.md``);
* ``static/``: the page (no build step, nothing from a CDN);
* ``loadtest``: ``python -m hearts_app.serve.loadtest``, requests/s and latency of the API.

User documentation: ``docs/serve.md``.
"""
