"""The static web build (``hearts export --web DIR``): the page of ``hearts serve`` with no game server.

``build_web(out)`` writes into ``out`` a site any static file server can serve (browsers load modules
and WebAssembly over http(s), not from ``file://``; ``python -m http.server -d DIR`` will do)::

    index.html              the page (clients/web/index.html, as it is), its manifest.webmanifest and icon.svg
    static/                 the page's files, copied whole (clients/web/static: main.js, app.js and the
                            modules it imports, i18n.js, style.css)
    static/js/              the JavaScript client (clients/js/src: engine, encoder, the plain runtime, local_api)
    sw.js, offline.json     the service worker (clients/web/sw.js) and the files it keeps for offline play
    config.json             the page's back end: {"backend": "local", "models": "models/models.json"}
    models/models.json      the policies offered: {"models": [{"spec", "model", "manifest", "rules", "description"}]}
    models/<spec>/          each shipped exported policy: policy.onnx and policy.json

One page for both ways (:data:`PAGE_DIR`, which ``hearts serve`` serves too, with a config.json of
its own): the page reads config.json and, here, takes ``clients/js/src/local_api.js`` as its back
end, which answers the same requests with the same JSON as the server (``hearts_app/serve/view.py``),
from the JavaScript engine, the computer seats played by the exported policies (run in plain
JavaScript by ``clients/js/src/plain_runtime.js``: no WebAssembly to download) or the random agent, deals from the browser's ``crypto.getRandomValues``, the games in its ``localStorage``.

The opponents are the levels of the difficulty ladders given (``levels``: folders written by
``hearts export --ladder NAME --out DIR``, export/ladder.py; ``hearts export --web DIR`` exports both
shipped ladders and gives them; each level offered by its name, easiest first, as ``level:<name>``,
the server's names), then the exported policies shipped in ``agents/policies/<name>/`` (``policy.onnx`` and
``policy.json``) that are not already a level, offered as ``<name>`` with ``-`` for ``_``
(``ppo-classic``); each plays the rules of its manifest. The random agent plays every rule set. The
files are read from this repository (the page and ``clients/js/src``; no npm package is needed).
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: The page, one for the server and the static build: index.html and static/ (main.js, app.js and the
#: modules it imports, i18n.js, style.css).
PAGE_DIR = ROOT / "clients" / "web"
CLIENT_DIR = ROOT / "clients" / "js"
POLICIES_DIR = ROOT / "agents" / "policies"
#: The page's files beside index.html: its web app manifest, icon and service worker.
PAGE_FILES = ("index.html", "manifest.webmanifest", "icon.svg", "sw.js")
MODELS_FORMAT = "hearts-lab-web-models"
#: The build's config.json: the page's back end is the browser's own (clients/js/src/local_api.js).
PAGE_CONFIG = {"backend": "local", "models": "models/models.json"}


class WebBuildError(Exception):
    """The build cannot be made: one line saying what is missing and what to run."""


def find_policies(policies_dir: Path = POLICIES_DIR) -> list[tuple[str, Path]]:
    """``(spec, folder)`` of each exported policy (a folder with policy.onnx and policy.json), by name."""
    if not policies_dir.is_dir():
        return []
    return [(folder.name.replace("_", "-"), folder) for folder in sorted(policies_dir.iterdir())
            if (folder / "policy.onnx").is_file() and (folder / "policy.json").is_file()]


def find_levels(ladder_dir: Path) -> list[tuple[str, Path, Path, str]]:
    """``(spec, model, manifest, description)`` of each network of each level of a ladder export (its
    levels.json), easiest first, a level's networks in the order they are tried (its ``networks``; a
    preset's own network before the family's); the spec is ``level:<name>``, as the server names the
    levels (agents.level_files)."""
    index = ladder_dir / "levels.json"
    if index.exists() and not index.is_file():  # a folder, or a device such as /dev/zero that never ends
        raise WebBuildError(f"{index} is not a file: name a folder written by hearts export --ladder")
    try:
        levels = json.loads(index.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as err:
        raise WebBuildError(f"{index} cannot be read ({err}): name a folder written by hearts export --ladder") from None
    if not isinstance(levels, dict) or levels.get("format") != "hearts-lab-levels" or not isinstance(levels.get("levels"), list):
        raise WebBuildError(f"{index} is not a ladder's levels.json (format hearts-lab-levels)")
    out = []
    for level in levels["levels"]:
        networks = level.get("networks") if isinstance(level, dict) else None
        for network in networks if isinstance(networks, list) and networks else [level]:
            try:
                name, model, manifest = str(level["name"]), ladder_dir / network["model"], ladder_dir / network["manifest"]
            except (KeyError, TypeError):
                raise WebBuildError(f"{index}: a level without name, model and manifest") from None
            inside = ladder_dir.resolve()
            for path in (model, manifest):  # only files of the ladder are published, never ../ or /etc/...
                if "\x00" in str(path):  # (no file has a NUL byte in its name; resolve() would raise)
                    raise WebBuildError(f"{index}: level {name!r} names {str(path)[:80]!r}, a path with a NUL byte")
                if not path.resolve().is_relative_to(inside):
                    raise WebBuildError(f"{index}: level {name!r} names {str(path)[:80]}, outside the ladder's folder "
                                        f"{ladder_dir}; a level's files are paths inside it")
            if not re.fullmatch(r"[a-z0-9][a-z0-9_-]*", name) or not model.is_file() or not manifest.is_file():
                raise WebBuildError(f"{index}: level {name!r} needs a plain name and its {model.name} and {manifest.name}")
            out.append((f"level:{name}", model, manifest, str(level.get("description") or "")))
    return out


def _space_key(manifest: dict) -> str:
    """What the network of a manifest covers, as a key: its rule space (else its rules), the rules' name aside."""
    rules = {k: v for k, v in (manifest.get("rules") or {}).items() if k != "name"}
    return json.dumps(manifest.get("rule_space") or rules, sort_keys=True)


def _read_manifest(manifest: Path) -> dict:
    try:
        data = json.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as err:
        raise WebBuildError(f"{manifest} is not a policy manifest ({err})") from None
    if not isinstance(data, dict) or not isinstance(data.get("rules", {}), dict):
        raise WebBuildError(f"{manifest} is not a policy manifest (not a JSON object with rules)")
    space = data.get("rule_space")
    fields = space.get("fields", {}) if isinstance(space, dict) else None
    if space is not None and not (isinstance(fields, dict) and all(isinstance(v, list) for v in fields.values())):
        raise WebBuildError(f"{manifest} is not a policy manifest (its rule_space is not an object whose fields "
                            "are lists of values)")
    return data


def _write_offline_list(out: Path) -> None:
    """offline.json: what the service worker keeps at install (the page, its scripts, the configs; the
    models it keeps as a game first fetches them), and a version that changes with any of them."""
    files = ["./", "config.json", "manifest.webmanifest", "icon.svg", "models/models.json",
             *sorted(path.relative_to(out).as_posix() for path in (out / "static").rglob("*") if path.is_file())]
    digest = hashlib.sha256()
    for name in ["index.html", *files[1:]]:
        digest.update(name.encode() + b"\0" + (out / name).read_bytes())
    (out / "offline.json").write_text(json.dumps({"version": digest.hexdigest()[:16], "files": files}, indent=1) + "\n",
                                      encoding="utf-8")


def check_site_folder(out: str | Path) -> None:
    """Refuse (:class:`WebBuildError`) a folder the build may not write into: a file, or a folder that
    holds other files than an earlier build."""
    out = Path(out)
    if out.exists() and (not out.is_dir() or (any(out.iterdir()) and not (out / "models" / "models.json").is_file())):
        raise WebBuildError(f"{out} is not empty and not an earlier web build: name a new or empty folder")


def build_web(out: str | Path, page_dir: Path = PAGE_DIR, client_dir: Path = CLIENT_DIR,
              policies_dir: Path = POLICIES_DIR, levels: Sequence[str | Path] = ()) -> dict[str, Path | list[str]]:
    """Write the static build into ``out`` (see the module docstring); returns what was written:
    ``index`` (the page), ``models`` (the specs offered besides ``random``, in the page's order).
    ``levels``: ladder exports whose levels come first. A folder that is not empty must be an earlier
    build (it is replaced). Raises :class:`WebBuildError`."""
    out = Path(out)
    if not (page_dir / "index.html").is_file() or not (page_dir / "static" / "main.js").is_file():
        raise WebBuildError(f"the page is not in {page_dir} (index.html and static/main.js)")
    sources = sorted((client_dir / "src").glob("*.js"))
    if not (client_dir / "src" / "local_api.js").is_file():
        raise WebBuildError(f"the JavaScript client is not in {client_dir / 'src'} (local_api.js, engine.js, hearts.js)")
    offered: list[tuple[str, Path, Path, str]] = [level for folder in levels for level in find_levels(Path(folder))]
    taken = {hashlib.sha256(model.read_bytes()).hexdigest() for _, model, _, _ in offered}
    for spec, folder in find_policies(policies_dir):
        if hashlib.sha256((folder / "policy.onnx").read_bytes()).hexdigest() not in taken:
            offered.append((spec, folder / "policy.onnx", folder / "policy.json", ""))
    manifests = [_read_manifest(manifest) for _, _, manifest, _ in offered]  # each read once
    rules_names = [manifest.get("rules", {}).get("name") for manifest in manifests]
    games = [(spec, _space_key(manifest)) for (spec, _, _, _), manifest in zip(offered, manifests)]
    if len(set(games)) != len(games) or "random" in dict(games):
        shown = [(spec, name) for (spec, _, _, _), name in zip(offered, rules_names)]
        raise WebBuildError(f"two opponents share a name for the same rules ({', '.join(map(str, shown))}; "
                            "random is the random agent's)")
    names = list(dict.fromkeys(spec for spec, _ in games))
    if not offered:
        raise WebBuildError(f"no exported policy in {policies_dir} (a folder with policy.onnx and policy.json): "
                            "hearts export CHECKPOINT --out agents/policies/NAME writes one")
    check_site_folder(out)

    for old in ("static", "models"):
        shutil.rmtree(out / old, ignore_errors=True)
    out.mkdir(parents=True, exist_ok=True)
    for name in PAGE_FILES:
        shutil.copy2(page_dir / name, out / name)
    static = out / "static"
    shutil.copytree(page_dir / "static", static, ignore=shutil.ignore_patterns("__pycache__"))
    (static / "js").mkdir()
    for source in sources:
        shutil.copy2(source, static / "js" / source.name)
    (out / "config.json").write_text(json.dumps(PAGE_CONFIG, indent=1) + "\n", encoding="utf-8")

    entries = []
    for (spec, model, manifest_file, description), manifest, rules in zip(offered, manifests, rules_names):
        # A level's folder names its rules, and "family" for a network covering a family of rule sets
        # (a level may have both: the strong level's preset network and its family's).
        family = any(len(values) > 1 for values in (manifest.get("rule_space") or {}).get("fields", {}).values())
        name = f"{spec}-{rules}" + ("-family" if family else "") if spec.startswith("level:") else spec
        folder = re.sub(r"[^A-Za-z0-9_-]", "-", name)
        used = {entry["model"].split("/")[0] for entry in entries}
        base, copy = folder, 1
        while folder in used:  # e.g. both ladders' moon-off networks: rules "custom", a family each
            copy += 1
            folder = f"{base}-{copy}"
        (out / "models" / folder).mkdir(parents=True)
        shutil.copy2(model, out / "models" / folder / "policy.onnx")
        shutil.copy2(manifest_file, out / "models" / folder / "policy.json")
        entries.append({"spec": spec, "model": f"{folder}/policy.onnx", "manifest": f"{folder}/policy.json",
                        "rules": rules, "description": description})
    (out / "models" / "models.json").write_text(
        json.dumps({"format": MODELS_FORMAT, "version": 1, "models": entries}, indent=1) + "\n", encoding="utf-8")
    _write_offline_list(out)
    return {"index": out / "index.html", "models": names}
