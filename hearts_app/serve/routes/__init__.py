"""The service's routes, one ``APIRouter`` per part, each made by a function over what it serves:

* ``page``: ``GET /`` the page, ``/config.json`` its back end, its manifest and icon (``/static`` is
  mounted by ``app.create_app``);
* ``games``: ``/api/v1/options`` and ``/api/v1/games...`` over a ``games.GameStore``;
* ``bots``: ``/api/v1/agents`` and ``POST /api/v1/act`` over the batching ``BotService``.
"""
