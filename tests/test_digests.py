"""scripts/digests.py: the digests of a tiny subset in --quick mode are the same run after run."""

import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def load_script():
    spec = importlib.util.spec_from_file_location("digests_script", ROOT / "scripts" / "digests.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_quick_subset_is_deterministic(tmp_path, monkeypatch):
    digests = load_script()
    monkeypatch.chdir(ROOT)
    only = ["golden-records:clients/js/test/fixtures/sample_record.json", "records:two_player:batch",
            "service:hard:clients/js/test/fixtures/sample_record.json"]
    first = digests.run(ROOT, quick=True, slow=False, only=only, say=lambda _: None)
    second = digests.run(ROOT, quick=True, slow=False, only=only, say=lambda _: None)
    assert set(first) == set(only)
    assert first == second
    assert all(len(value) == 64 for value in first.values())


def test_compare_names_what_differs(tmp_path, capsys):
    digests = load_script()
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps({"digests": {"x": "1", "y": "2"}}))
    b.write_text(json.dumps({"digests": {"x": "1", "y": "3", "z": "4"}}))
    assert digests.main(["--compare", str(a), str(a)]) == 0
    assert digests.main(["--compare", str(a), str(b)]) == 1
    out = capsys.readouterr().out
    assert "y: differs" in out and "z: only in second" in out and "x:" not in out
