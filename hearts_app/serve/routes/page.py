"""The page's routes: ``GET /`` (``clients/web/index.html``, ``export.web.PAGE_DIR``), its manifest and
icon, and ``GET /config.json``, its back end (``{"backend": "http"}``: this server). The page is the
static build's too (``clients/web``), handed this server as its back end."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import FileResponse, HTMLResponse

from export.web import PAGE_DIR


def router() -> APIRouter:
    """The page's routes (none in the API's schema)."""
    routes = APIRouter(include_in_schema=False)

    @routes.get("/config.json")
    def page_config():
        return {"backend": "http"}

    @routes.get("/manifest.webmanifest")
    def page_manifest():
        return FileResponse(PAGE_DIR / "manifest.webmanifest", media_type="application/manifest+json")

    @routes.get("/icon.svg")
    def page_icon():
        return FileResponse(PAGE_DIR / "icon.svg", media_type="image/svg+xml")

    @routes.get("/")
    def index():
        page = PAGE_DIR / "index.html"
        if page.is_file():
            return FileResponse(page, media_type="text/html")
        return HTMLResponse("<!doctype html><title>Hearts Lab</title><p>The page is not here (it is served from "
                            "clients/web of a clone of the project); the API is at <a href='/docs'>/docs</a>.</p>")

    return routes
