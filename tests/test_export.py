"""Export to game apps: the ONNX file and manifest, the JavaScript client, the web page.

One small policy (``PolicyNet(hidden=[32])``, classic rules) is exported once with ``hearts export``
(the ``exported`` fixture, in conftest.py); every check runs against that export:

* the file meets the contract (one file, opset 17, names, types, dynamic batch, metadata) and the
  manifest describes it (sha256, observation layout, rules, provenance);
* parity: torch, onnxruntime in Python, onnxruntime-node (``clients/js/run_tests.sh``) and the client in
  the browser (headless Chromium, onnxruntime-web) pick the same cards with probabilities within 1e-5; the
  browser also picks Python's golden cards for every level of the shipped classic and two-player ladders
  (``hearts export --ladder``);
* ``onnx:PATH`` plays the arena exactly like the checkpoint it came from;
* mismatched manifests are refused with clear errors, in Python and in JavaScript (the JavaScript
  side is in ``clients/js/test/hearts.test.js``); seat records are tested in tests/test_seat_record.py;
* the committed fixtures under ``clients/js/test/fixtures`` are still what Python computes.
"""

from __future__ import annotations

import functools
import http.server
import json
import os
import re
import shutil
import subprocess
import threading
from pathlib import Path

import numpy as np
import onnx
import pytest
import torch

import hearts_env as he
from agents import make
from agents.checkpoint import load_net
from agents.base import sha256_file
from agents.onnx_policy import OnnxPolicyAgent, PolicyManifestError
from eval import arena
from export import golden
from export.ladder import LADDERS, export_ladder
from export.model import exportable
from hearts_app import cli
from hearts_env import engine, observe, seat_record

ROOT = Path(__file__).resolve().parents[1]
CLIENT = ROOT / "clients" / "js"
FIXTURES = CLIENT / "test" / "fixtures"
SHIPPED = ROOT / "agents" / "policies" / "ppo_classic"
TOL = 1e-5
# The ways a record can be wrong that every golden.json must show an encoder (by case name).
INVALID_KINDS = {"a card twice", "13 cards missing", "a card too many", "did not follow suit while holding the suit",
                 "hearts led before they were broken", "unknown key", "not this seat's turn"}


def torch_policy(checkpoint, obs, mask):
    net, _ = load_net(checkpoint)
    with torch.no_grad():
        action, prob = exportable(net)(torch.as_tensor(obs), torch.as_tensor(mask))
    return action.numpy(), prob.numpy()


# ---------------------------------------------------------------------------------------------
# The exported files
# ---------------------------------------------------------------------------------------------


def test_export_writes_one_self_contained_onnx_file_and_manifest(exported):
    out = exported["dir"]
    assert exported["model"] in out.glob("*.onnx")  # the folder looked in is the export's
    assert not list(out.glob("*.data")), "weights must be inside the model file"
    model = onnx.load(str(exported["model"]), load_external_data=False)
    assert all(t.data_location != onnx.TensorProto.EXTERNAL for t in model.graph.initializer)
    assert {o.domain: o.version for o in model.opset_import}[""] == 17
    sig = [(v.name, v.type.tensor_type.elem_type, [d.dim_param or d.dim_value for d in v.type.tensor_type.shape.dim])
           for v in (*model.graph.input, *model.graph.output)]
    (n0, t0, d0), (n1, t1, d1), (n2, t2, d2), (n3, t3, d3) = sig
    assert (n0, t0, d0[1:]) == ("observation", onnx.TensorProto.FLOAT, [observe.OBS_DIM])
    assert (n1, t1, d1[1:]) == ("action_mask", onnx.TensorProto.BOOL, [52])
    assert (n2, t2) == ("action", onnx.TensorProto.INT64) and len(d2) == 1
    assert (n3, t3, d3[1:]) == ("probabilities", onnx.TensorProto.FLOAT, [52])
    assert all(isinstance(d[0], str) and d[0] for d in (d0, d1, d2, d3)), "the batch dimension must be dynamic"
    meta = {p.key: p.value for p in model.metadata_props}
    assert meta["hearts_lab.obs_version"] == str(observe.OBS_VERSION)
    assert json.loads(meta["hearts_lab.rules"]) == he.Rules.preset("classic").to_dict()

    manifest = json.loads(exported["manifest"].read_text())
    assert manifest["model"]["sha256"] == sha256_file(exported["model"])
    assert manifest["observation"]["version"] == observe.OBS_VERSION
    assert manifest["observation"]["dimension"] == observe.OBS_DIM
    layout = manifest["observation"]["layout"]
    assert [p["name"] for p in layout] == list(observe.OBSERVATION_LAYOUT)
    for piece in layout:
        s, shape = observe.OBSERVATION_LAYOUT[piece["name"]]
        assert (piece["offset"], piece["size"], piece["shape"]) == (s.start, s.stop - s.start, list(shape))
        assert len(piece["meaning"]) > 8
    assert manifest["cards"]["ids"][49] == "QS" and manifest["cards"]["encoding"] == "id = 13 * suit + rank"
    assert he.Rules.from_dict(manifest["rules"]) == he.Rules.preset("classic")
    assert manifest["record"]["version"] == seat_record.RECORD_VERSION
    assert manifest["provenance"]["network"]["hidden"] == [32]
    assert manifest["provenance"]["checkpoint_sha256"] == sha256_file(exported["checkpoint"])
    assert manifest["verified"]["actions_equal"] and manifest["verified"]["max_probability_difference"] < TOL
    cli_golden = exported["cli_golden"]
    assert len(cli_golden["cases"]) == 6 and cli_golden["model_sha256"] == manifest["model"]["sha256"]


def test_any_batch_size_runs(exported):
    agent = OnnxPolicyAgent(exported["model"])
    state = he.init(he.Rules.preset("classic"), 7, seed=3)
    for n in (1, 7):
        sub = state.take(np.arange(n))
        actions, prob = agent.policy(observe.observe(sub), engine.legal_mask(sub))
        assert actions.shape == (n,) and actions.dtype == np.int64 and prob.shape == (n, 52)
        assert engine.legal_mask(sub)[np.arange(n), actions].all()
        assert np.allclose(prob.sum(axis=1), 1, atol=1e-5) and (prob[~engine.legal_mask(sub)] == 0).all()


def test_export_cli_reports_a_bad_checkpoint(tmp_path, capsys):
    bad = tmp_path / "bad.pt"
    bad.write_bytes(b"not a checkpoint")
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["export", str(bad), "--out", str(tmp_path / "out")])
    assert exit_info.value.code == 2
    assert "not a readable Hearts Lab checkpoint" in capsys.readouterr().err


def test_a_failed_export_leaves_the_earlier_one_whole(exported, tmp_path, capsys):
    """--arena-results is read before any file is written, and the files are moved into place only
    together: a failed export never leaves a model beside another model's manifest."""
    out = tmp_path / "out"
    shutil.copytree(exported["dir"], out)
    before = {name: (out / name).read_bytes() for name in ("policy.onnx", "policy.json", "golden.json")}
    two_player = ROOT / "agents" / "policies" / "ppo_two_player.pt"
    for results in (tmp_path / "missing.json", ROOT / "configs" / "smoke.yaml"):
        with pytest.raises(SystemExit) as exit_info:
            cli.main(["export", str(two_player), "--out", str(out), "--golden", "0", "--arena-results", str(results)])
        assert exit_info.value.code == 2
        assert f"--arena-results {results}" in capsys.readouterr().err
        assert {name: (out / name).read_bytes() for name in before} == before
    assert sorted(p.name for p in out.iterdir() if p.name.startswith(".")) == []  # no staging folder left
    afile = tmp_path / "afile"
    afile.write_text("")
    with pytest.raises(SystemExit):
        cli.main(["export", str(two_player), "--out", str(afile), "--golden", "0"])
    assert "is a file; name a folder" in capsys.readouterr().err


def test_export_cli_without_the_export_extra_says_how_to_install_it(tmp_path, capsys, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "onnxscript", None)  # importing it now raises ImportError
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["export", "agents/policies/ppo_classic.pt", "--out", str(tmp_path / "out")])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "onnxscript" in err and "scripts/setup.sh export" in err
    assert not (tmp_path / "out").exists()


def check_golden_vectors(data):
    """Every encoder case of a golden.json encodes as listed and every invalid record is refused
    by hearts_env.seat_record with the listed message."""
    assert data["encoder_cases"], "golden.json lists no encoder cases"
    assert len({c["record"]["rules"]["name"] for c in data["encoder_cases"]}) >= 4
    obs, mask = seat_record.encode([c["record"] for c in data["encoder_cases"]])
    assert np.array_equal(obs, np.array([c["observation"] for c in data["encoder_cases"]], dtype=np.float32))
    assert np.array_equal(mask, np.array([c["mask"] for c in data["encoder_cases"]], dtype=bool))
    assert INVALID_KINDS <= {c["name"] for c in data["invalid"]}
    for case in data["invalid"]:
        with pytest.raises(seat_record.SeatRecordError) as refused:
            seat_record.observation(case["record"])
        assert str(refused.value) == case["message"], case["name"]
        assert case["error"] in case["message"], case["name"]


def test_exported_golden_lists_encoder_cases_and_invalid_records(exported):
    """``hearts export`` writes the encoder cases (other rules) and invalid records docs/export.md promises."""
    check_golden_vectors(exported["cli_golden"])
    check_golden_vectors(exported["golden"])
    assert exported["cli_golden"]["invalid"] == golden.invalid_records()


def test_an_empty_action_mask_gives_action_minus_one_and_zero_probabilities(exported):
    cases = exported["golden"]["cases"][:5]
    obs = np.array([c["observation"] for c in cases], dtype=np.float32)
    mask = np.array([c["mask"] for c in cases], dtype=bool)
    mask[[0, 3]] = False
    o_action, o_prob = OnnxPolicyAgent(exported["model"]).policy(obs, mask)
    t_action, t_prob = torch_policy(exported["checkpoint"], obs, mask)
    for action, prob in ((o_action, o_prob), (t_action, t_prob)):
        assert action[[0, 3]].tolist() == [-1, -1]
        assert (prob[[0, 3]] == 0).all() and np.isfinite(prob).all()
        # The other rows are untouched: the golden decisions.
        assert action[[1, 2, 4]].tolist() == [cases[i]["action"] for i in (1, 2, 4)]
        assert np.abs(prob[[1, 2, 4]] - np.array([cases[i]["probabilities"] for i in (1, 2, 4)])).max() <= TOL
    manifest = json.loads(exported["manifest"].read_text())
    assert manifest["model"]["no_legal_card"] == {"action": -1, "probabilities": 0}
    assert manifest["verified"]["no_legal_card"] is True


# ---------------------------------------------------------------------------------------------
# Parity: torch, onnxruntime (Python), onnxruntime-node, the browser
# ---------------------------------------------------------------------------------------------


def test_python_onnxruntime_matches_torch_on_golden_records(exported):
    cases = exported["golden"]["cases"]
    obs, mask = seat_record.encode([c["record"] for c in cases])
    assert np.array_equal(obs, np.array([c["observation"] for c in cases], dtype=np.float32))
    t_action, t_prob = torch_policy(exported["checkpoint"], obs, mask)
    o_action, o_prob = OnnxPolicyAgent(exported["model"]).policy(obs, mask)
    assert np.array_equal(o_action, t_action)
    assert np.array_equal(o_action, [c["action"] for c in cases])
    diff = float(np.abs(o_prob - t_prob).max())
    print(f"onnxruntime (Python) vs torch on {len(cases)} golden records: actions equal, max |dp| = {diff:.2e}")
    assert diff <= TOL
    assert len({c["action"] for c in cases}) > 5 and any(max(c["probabilities"]) < 0.9 for c in cases)


def test_javascript_client_matches_python(exported, tmp_path):
    if shutil.which("node") is None:
        pytest.skip("node is not installed (the JavaScript client's tests need Node 20+)")
    report = tmp_path / "js-report.json"
    env = {**os.environ, "HEARTS_GOLDEN_DIR": str(exported["dir"]), "HEARTS_JS_REPORT": str(report)}
    run = subprocess.run([str(CLIENT / "run_tests.sh")], env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert re.search(r"^# fail 0$", run.stdout, re.M) and re.search(r"^# pass [1-9]", run.stdout, re.M)
    numbers = json.loads(report.read_text())
    print(f"onnxruntime-node vs Python: {numbers}")
    assert numbers["actions_equal"] == numbers["cases"] == len(exported["golden"]["cases"])
    assert numbers["max_probability_difference"] <= TOL


@pytest.mark.slow
def test_the_plain_runtime_picks_every_levels_golden_cards(exported, tmp_path):
    """The static page's plain JavaScript runtime (clients/js/src/plain_runtime.js, no onnxruntime) on
    every network of both shipped ladders (``hearts export --ladder``, 20 golden records each) and the
    test export: Python's card every time, probabilities within 1e-5."""
    if shutil.which("node") is None:
        pytest.skip("node is not installed (the JavaScript client's tests need Node 20+)")
    folders = [exported["dir"]]
    for ladder in sorted(LADDERS):
        export_ladder(ladder, tmp_path / ladder, golden=20, log=lambda line: None)
        folders += sorted(path.parent for path in (tmp_path / ladder).rglob("golden.json"))
    assert len(folders) >= 9
    env = {**os.environ, "HEARTS_PLAIN_DIRS": os.pathsep.join(map(str, folders))}
    run = subprocess.run(["node", "--test", "test/plain_runtime.test.js"], cwd=CLIENT, env=env, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0 and re.search(r"^# fail 0$", run.stdout, re.M), run.stdout[-4000:] + run.stderr[-2000:]


class _Handler(http.server.SimpleHTTPRequestHandler):
    """Serves clients/js, and the export under /fixtures-under-test/."""

    export_dir: Path = Path(".")

    def translate_path(self, path):
        prefix = "/fixtures-under-test/"
        if path.startswith(prefix):
            return str(self.export_dir / path[len(prefix):].split("?")[0])
        return super().translate_path(path)

    def log_message(self, *args):
        pass


#: Run in the page: the client (clients/js/src/hearts.js) on onnxruntime-web, the policy of an export
#: served under /fixtures-under-test/, its pick for the sample record and for every golden record.
_PICKS_IN_THE_BROWSER = """async () => {
  const ort = await import('/node_modules/onnxruntime-web/dist/ort.wasm.min.mjs');
  const { chooseCard, loadPolicy } = await import('/src/hearts.js');
  ort.env.wasm.numThreads = 1;
  ort.env.wasm.wasmPaths = '/node_modules/onnxruntime-web/dist/';
  const get = async (name) => (await fetch(`/fixtures-under-test/${name}`)).json();
  const [manifest, record, golden] = await Promise.all([get('policy.json'), get('sample_record.json'), get('golden.json')]);
  const session = await loadPolicy(ort, '/fixtures-under-test/policy.onnx', manifest);
  const pick = async (r) => {
    const choice = await chooseCard(session, r);
    return { action: choice.action, card: choice.card, probabilities: Array.from(choice.probabilities) };
  };
  const picks = [];
  for (const c of golden.cases) picks.push(await pick(c.record));
  return [await pick(record), picks];
}"""


@pytest.fixture
def browser_page():
    """The JavaScript client in headless Chromium (Playwright), onnxruntime-web: ``browser_page(folder)``
    serves clients/js and an export's ``folder`` under /fixtures-under-test/ and returns the client's
    result for the folder's ``sample_record.json`` and its picks for every record of its ``golden.json``.
    Skips where chromium, Playwright or onnxruntime-web are missing."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("chromium is not installed (apt-get install chromium) — the browser check needs it")
    playwright = pytest.importorskip("playwright.sync_api")
    if not (CLIENT / "node_modules" / "onnxruntime-web" / "dist").is_dir():
        if shutil.which("npm") is None:
            pytest.skip("npm is not installed: onnxruntime-web for the page cannot be installed")
        subprocess.run([str(CLIENT / "setup.sh")], check=True, timeout=300)

    def run(folder: Path) -> tuple[dict, list[dict]]:
        handler = type("Handler", (_Handler,), {"export_dir": Path(folder)})
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(handler, directory=str(CLIENT)))
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            with playwright.sync_playwright() as p:
                browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox", "--disable-gpu",
                                                                            "--disable-dev-shm-usage"])
                try:
                    page = browser.new_page()
                    page.goto(f"http://127.0.0.1:{server.server_address[1]}/test/")  # a page of the origin
                    result, picks = page.evaluate(_PICKS_IN_THE_BROWSER)
                finally:
                    browser.close()
        finally:
            server.shutdown()
            server.server_close()
        return result, picks

    return run


@pytest.mark.slow
def test_browser_page_picks_pythons_card(exported, browser_page):
    result, picks = browser_page(exported["dir"])
    record = exported["sample"]
    obs, mask = seat_record.encode([record])
    t_action, _ = torch_policy(exported["checkpoint"], obs, mask)
    assert result["action"] == int(t_action[0]) and result["card"] == he.cards.card_text(int(t_action[0]))
    assert mask[0].sum() > 1, "the sample record should offer a choice"
    # Every golden record, run by onnxruntime-web in the page, against torch.
    cases = exported["golden"]["cases"]
    obs, mask = seat_record.encode([c["record"] for c in cases])
    t_action, t_prob = torch_policy(exported["checkpoint"], obs, mask)
    assert [p["action"] for p in picks] == t_action.tolist()
    diff = float(np.abs(np.array([p["probabilities"] for p in picks]) - t_prob).max())
    print(f"browser (onnxruntime-web) vs torch on {len(picks)} golden records: actions equal, max |dp| = {diff:.2e}")
    assert diff <= TOL


@pytest.mark.slow
@pytest.mark.parametrize("ladder", sorted(LADDERS))
def test_browser_page_picks_every_levels_golden_cards(ladder, browser_page, tmp_path):
    """Every level of the shipped ladder, exported (``hearts export --ladder``): onnxruntime-web in the
    page picks the card of every record of the level's golden.json (Python's onnxruntime)."""
    out = tmp_path / "levels"
    export_ladder(ladder, out, golden=20, log=lambda line: None)
    levels = json.loads((out / "levels.json").read_text())
    assert [entry["name"] for entry in levels["levels"]] == [level.name for level in LADDERS[ladder].levels]
    for entry in levels["levels"]:
        folder = (out / entry["model"]).parent
        assert (out / entry["golden"]) == folder / "golden.json"
        cases = json.loads((folder / "golden.json").read_text())["cases"]
        record = next(c for c in cases if sum(c["mask"]) > 1)  # the page's record: one with a choice
        (folder / "sample_record.json").write_text(json.dumps(record["record"]))
        result, picks = browser_page(folder)
        assert result["action"] == record["action"], entry["name"]
        assert [p["action"] for p in picks] == [c["action"] for c in cases], entry["name"]
        diff = float(np.abs(np.array([p["probabilities"] for p in picks])
                            - np.array([c["probabilities"] for c in cases])).max())
        print(f"{ladder} {entry['name']}: browser (onnxruntime-web) vs Python on {len(picks)} golden records: "
              f"actions equal, max |dp| = {diff:.2e}")
        assert diff <= TOL, entry["name"]


# ---------------------------------------------------------------------------------------------
# onnx: agents in the arena
# ---------------------------------------------------------------------------------------------


def test_onnx_agent_plays_the_arena_exactly_like_its_checkpoint(exported):
    rules = he.Rules.preset("classic")
    results = {}
    for kind, path in (("onnx", exported["model"]), ("ckpt", exported["checkpoint"])):
        spec = f"{kind}:{path}"
        result = arena.head_to_head(spec, "easy", rules=rules, deals=50, workers=1, progress=False)
        results[kind] = json.loads(json.dumps(result.summary).replace(spec, "CANDIDATE"))
    assert results["onnx"] == results["ckpt"]
    row = next(r for r in results["onnx"]["leaderboard"] if r["agent"] == "CANDIDATE")
    assert row["hands"] == 200 and row["points_per_hand"]["n"] == 50


def test_onnx_spec_refuses_other_rules_and_missing_files(exported, tmp_path):
    with pytest.raises(PolicyManifestError, match="rules"):
        make(f"onnx:{exported['model']}", rules=he.Rules.preset("two_player"))
    with pytest.raises(arena.AgentSpecError, match="not found"):
        arena.resolve_agent(f"onnx:{tmp_path / 'none.onnx'}")


# ---------------------------------------------------------------------------------------------
# Manifests that do not match
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("change, message", [
    (lambda m: m["observation"].__setitem__("version", 2), "observation v2"),
    (lambda m: m["observation"].__setitem__("dimension", 630), "630 floats"),
    (lambda m: m["observation"]["layout"][3].__setitem__("offset", 7), "layout differs"),
    (lambda m: m["model"].__setitem__("sha256", "0" * 64), "another model"),
    (lambda m: m.__setitem__("format_version", 2), "format"),
])
def test_a_manifest_that_does_not_match_is_refused(exported, tmp_path, change, message):
    shutil.copy(exported["model"], tmp_path / "policy.onnx")
    manifest = json.loads(exported["manifest"].read_text())
    change(manifest)
    (tmp_path / "policy.json").write_text(json.dumps(manifest))
    with pytest.raises(PolicyManifestError, match=message):
        OnnxPolicyAgent(tmp_path / "policy.onnx")
    with pytest.raises(arena.AgentSpecError, match=message):
        arena.resolve_agent(f"onnx:{tmp_path / 'policy.onnx'}")


def test_a_model_without_its_manifest_is_refused(exported, tmp_path):
    shutil.copy(exported["model"], tmp_path / "lonely.onnx")
    with pytest.raises(PolicyManifestError, match="no manifest lonely.json"):
        OnnxPolicyAgent(tmp_path / "lonely.onnx")


def test_a_model_exported_for_another_observation_version_is_refused(exported, tmp_path):
    model = onnx.load(str(exported["model"]))
    for prop in model.metadata_props:
        if prop.key == "hearts_lab.obs_version":
            prop.value = "0"
    onnx.save(model, str(tmp_path / "policy.onnx"))
    manifest = json.loads(exported["manifest"].read_text())
    manifest["model"]["sha256"] = sha256_file(tmp_path / "policy.onnx")
    (tmp_path / "policy.json").write_text(json.dumps(manifest))
    with pytest.raises(PolicyManifestError, match="exported for v0"):
        OnnxPolicyAgent(tmp_path / "policy.onnx")


# ---------------------------------------------------------------------------------------------
# The committed fixtures of the JavaScript client
# ---------------------------------------------------------------------------------------------


def test_committed_client_fixtures_are_current():
    """clients/js/test/fixtures must be what Python computes now (regenerate with
    ``python -m export.fixtures clients/js/test/fixtures`` after a deliberate change)."""
    data = json.loads((FIXTURES / "golden.json").read_text())
    manifest = json.loads((FIXTURES / "policy.json").read_text())
    assert data["model_sha256"] == manifest["model"]["sha256"] == sha256_file(FIXTURES / "policy.onnx")
    agent = OnnxPolicyAgent(FIXTURES / "policy.onnx")  # checks the manifest against this code
    cases = data["cases"] + data["encoder_cases"]
    obs, mask = seat_record.encode([c["record"] for c in cases])
    assert np.array_equal(obs, np.array([c["observation"] for c in cases], dtype=np.float32))
    assert np.array_equal(mask, np.array([c["mask"] for c in cases], dtype=bool))
    n = len(data["cases"])
    action, prob = agent.policy(obs[:n], mask[:n])
    assert np.array_equal(action, [c["action"] for c in data["cases"]])
    assert np.abs(prob - np.array([c["probabilities"] for c in data["cases"]])).max() <= TOL
    assert data["invalid"] == golden.invalid_records()
    sample = json.loads((FIXTURES / "sample_record.json").read_text())
    assert sample in [c["record"] for c in data["cases"]]


def test_shipped_classic_bundle_is_the_current_export():
    """agents/policies/ppo_classic/ is what ``hearts export agents/policies/ppo_classic.pt`` writes now:
    the golden vectors with encoder cases and invalid records, the model's empty-mask signal, and
    golden decisions that onnxruntime reproduces."""
    manifest = json.loads((SHIPPED / "policy.json").read_text())
    data = json.loads((SHIPPED / "golden.json").read_text())
    assert data["model_sha256"] == manifest["model"]["sha256"] == sha256_file(SHIPPED / "policy.onnx")
    check_golden_vectors(data)
    assert data["invalid"] == golden.invalid_records()
    agent = OnnxPolicyAgent(SHIPPED / "policy.onnx")
    obs, mask = seat_record.encode([c["record"] for c in data["cases"]])
    assert np.array_equal(obs, np.array([c["observation"] for c in data["cases"]], dtype=np.float32))
    action, prob = agent.policy(obs, mask)
    assert np.array_equal(action, [c["action"] for c in data["cases"]])
    assert np.abs(prob - np.array([c["probabilities"] for c in data["cases"]])).max() <= TOL
    mask[0] = False
    action, prob = agent.policy(obs, mask)
    assert action[0] == -1 and (prob[0] == 0).all()
