"""Files from strangers: checkpoints, deal sets, game records and exported policies that are corrupt,
oversized or malicious.

Each is refused with one line saying what the file is not and why: before any allocation its
declared sizes would cause, without running code from it, and without passing on a library's
advice to load it unsafely (torch's "weights_only=False", numpy's "allow_pickle").
"""

from __future__ import annotations

import io
import os
import json
import pickle
import subprocess
import sys
import tracemalloc
import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch

from agents import AgentSpecError, make
from agents.checkpoint import CheckpointError, load_net, save
from agents.policy import PolicyNet
from eval.deals import DealSet, DealSetError
from hearts_app import cli
from hearts_env.rules import Rules

ROOT = Path(__file__).resolve().parents[1]
CLASSIC = Rules.preset("classic")
# Words of the libraries' advice to load a refused file unsafely; our messages never carry them.
UNSAFE_ADVICE = ("weights_only", "weights only", "unsafe", "allow_pickle", "trust", "can still be loaded",
                 "pickle.load")


def assert_plain_refusal(message: str, says: str) -> None:
    assert says in message, message
    assert "\n" not in message.strip(), message
    lowered = message.lower()
    for words in UNSAFE_ADVICE:
        assert words not in lowered, f"{words!r} in {message!r}"


class Marker:
    """A pickled object that, if ever unpickled, creates the file ``path``: it must never be."""

    def __init__(self, path: Path):
        self.path = str(path)

    def __reduce__(self):
        return (open, (self.path, "w"))


# ---- checkpoints -------------------------------------------------------------------------------

def checkpoint(tmp_path: Path, name: str = "ok.pt", **meta_changes) -> Path:
    """A small real checkpoint (one layer of 8), its metadata changed as given."""
    path = save(tmp_path / name, PolicyNet(hidden=[8]), {"rules": CLASSIC.to_dict()})
    if meta_changes:
        payload = torch.load(path, weights_only=True)
        meta = {**json.loads(payload["meta"]), **meta_changes}
        payload["meta"] = json.dumps(meta)
        torch.save(payload, path)
    return path


def load_net_in_capped_child(path):
    """``load_net(path)`` in a child process limited to 6 GB of address space, so a loader that
    builds the network before checking the file fails there (with a traceback) instead of filling
    this machine's memory; a refusal exits with code 3 and prints the message."""
    script = (
        "import resource, sys\n"
        "resource.setrlimit(resource.RLIMIT_AS, (6 << 30, 6 << 30))\n"
        "from agents.checkpoint import CheckpointError, load_net\n"
        "try:\n"
        "    load_net(sys.argv[1])\n"
        "except CheckpointError as err:\n"
        "    print(err)\n"
        "    sys.exit(3)\n"
    )
    run = subprocess.run([sys.executable, "-c", script, str(path)], cwd=ROOT, capture_output=True, text=True,
                         timeout=300, check=False)
    assert run.returncode == 3, run.stderr[-3000:]
    return run


def test_checkpoint_naming_a_huge_layer_is_refused_before_allocating(tmp_path):
    # 20 million units would take 50 GB; the file stores the weights of 8. Loaded in a child
    # process limited to 6 GB of address space, so a loader that builds the network first fails
    # there (with a traceback) instead of filling this machine's memory.
    path = checkpoint(tmp_path, "huge.pt", hidden=[20_000_000])
    assert path.stat().st_size < 100_000
    run = load_net_in_capped_child(path)
    assert_plain_refusal(run.stdout, "not a valid Hearts Lab checkpoint")
    assert "20000000" in run.stdout and "trunk.0.weight" in run.stdout


@pytest.mark.parametrize("changes", [
    {"hidden": [-5]},
    {"hidden": [0]},
    {"hidden": ["wide"]},
    {"hidden": "64"},
    {"hidden": [8.5]},
    {"hidden": [16]},  # sizes that do not match the stored weights (8)
    {"hidden": [8, 8]},
    {"card_scorer": -1},
    {"card_scorer": "many"},
], ids=["negative", "zero", "text-layer", "text", "fraction", "wider", "deeper", "negative-scorer", "text-scorer"])
def test_checkpoint_metadata_that_does_not_describe_its_weights_is_refused(tmp_path, changes):
    path = checkpoint(tmp_path, "bad.pt", **changes)
    with pytest.raises(CheckpointError) as err:
        load_net(path)
    assert_plain_refusal(str(err.value), "not a valid Hearts Lab checkpoint")


def test_checkpoint_metadata_that_is_not_an_object_is_refused(tmp_path):
    path = checkpoint(tmp_path)
    payload = torch.load(path, weights_only=True)
    for meta in ("[1, 2]", "[" * 100_000):  # a list; nesting deeper than the JSON reader recurses
        payload["meta"] = meta
        torch.save(payload, path)
        with pytest.raises(CheckpointError) as err:
            load_net(path)
        assert_plain_refusal(str(err.value), "Hearts Lab checkpoint")


def test_compressed_checkpoint_is_refused_before_it_is_inflated(tmp_path):
    # torch.save stores tensors uncompressed, but torch.load also inflates compressed zip members:
    # a small file could unpack to gigabytes. Here 16 MB of zeros packed into a few kilobytes.
    plain = checkpoint(tmp_path, "plain.pt")
    payload = torch.load(plain, weights_only=True)
    payload["extra"] = {"pad": torch.zeros(4 << 20)}
    torch.save(payload, plain)
    bomb = tmp_path / "bomb.pt"
    with zipfile.ZipFile(plain) as source, zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as out:
        for info in source.infolist():
            out.writestr(info.filename, source.read(info.filename))
    assert bomb.stat().st_size < 200_000
    with pytest.raises(CheckpointError) as err:
        load_net(bomb)
    message = str(err.value)
    assert_plain_refusal(message, "not a valid Hearts Lab checkpoint")
    assert str(bomb.stat().st_size) in message and "compressed" in message


def test_checkpoint_with_a_pickled_object_is_refused_without_running_it_or_unsafe_advice(tmp_path):
    marker = tmp_path / "code-ran"
    evil = tmp_path / "evil.pt"
    torch.save({"format": "hearts-lab-checkpoint-1", "model": {}, "meta": "{}", "x": Marker(marker)}, evil)
    junk = tmp_path / "junk.pt"
    junk.write_bytes(np.random.default_rng(0).integers(0, 256, 4096, dtype=np.uint8).tobytes())
    raw_pickle = tmp_path / "raw.pt"
    raw_pickle.write_bytes(pickle.dumps(Marker(marker)))
    from agents.belief import load_belief

    for path in (evil, junk, raw_pickle):
        with pytest.raises(CheckpointError) as err:
            load_net(path)
        assert_plain_refusal(str(err.value), "Hearts Lab checkpoint")
        with pytest.raises(AgentSpecError) as err:
            make(f"ckpt:{path}")
        assert_plain_refusal(str(err.value), "Hearts Lab checkpoint")
        with pytest.raises(CheckpointError) as err:  # a belief model is read by the same loader
            load_belief(path)
        assert_plain_refusal(str(err.value), "Hearts Lab checkpoint")
    assert not marker.exists()



def stored_as(tmp_path: Path, name: str, hidden: list[int], tensor) -> Path:
    """A checkpoint whose metadata says ``hidden`` and whose weights have exactly the shapes it
    implies, each made by ``tensor(shape)`` (so they may take far less memory than they claim)."""
    with torch.device("meta"):
        shapes = {k: tuple(t.shape) for k, t in PolicyNet(hidden=hidden).state_dict().items()}
    path = tmp_path / name
    meta = {"rules": CLASSIC.to_dict(), "obs_version": 1, "obs_dim": 629, "hidden": hidden, "card_scorer": 0}
    torch.save({"format": "hearts-lab-checkpoint-1", "model": {k: tensor(s) for k, s in shapes.items()},
                "meta": json.dumps(meta)}, path)
    return path


def test_checkpoint_of_stride_0_weights_is_refused_before_allocating(tmp_path):
    # torch.zeros(1).expand(H, 629) has the full shape over a one-element storage: the shapes match
    # the metadata, yet the file is tiny and the network would take 50 GB. Loaded in a child process
    # limited to 6 GB of address space, as above.
    path = stored_as(tmp_path, "stride0.pt", [20_000_000], lambda shape: torch.zeros(1).expand(shape))
    assert path.stat().st_size < 100_000
    run = load_net_in_capped_child(path)
    assert_plain_refusal(run.stdout, "not a valid Hearts Lab checkpoint")
    assert str(path.stat().st_size) in run.stdout


def test_checkpoint_whose_weights_share_storage_is_refused(tmp_path):
    # Each weight a contiguous view of one stored block: every tensor is backed, but together they
    # claim more than the file holds, so a network of many such layers would be many times the file.
    block = torch.zeros(256 * 629)
    path = stored_as(tmp_path, "shared.pt", [256, 256, 256],
                     lambda shape: block[:int(np.prod(shape))].view(shape))
    with pytest.raises(CheckpointError) as err:
        load_net(path)
    assert_plain_refusal(str(err.value), "not a valid Hearts Lab checkpoint")
    with pytest.raises(CheckpointError):  # stride 0 at a size this process can afford
        load_net(stored_as(tmp_path, "small.pt", [8], lambda shape: torch.zeros(1).expand(shape)))


def test_a_belief_model_of_stride_0_weights_is_refused(tmp_path):
    from agents.belief import BeliefNet, load_belief

    with torch.device("meta"):
        shapes = {k: tuple(t.shape) for k, t in BeliefNet([4096]).state_dict().items()}
    meta = {"rules": CLASSIC.to_dict(), "obs_version": 1, "obs_dim": 629, "hidden": [4096], "card_scorer": 0,
            "kind": "belief"}
    path = tmp_path / "belief.pt"
    torch.save({"format": "hearts-lab-checkpoint-1", "meta": json.dumps(meta),
                "model": {k: torch.zeros(1).expand(s) for k, s in shapes.items()}}, path)
    with pytest.raises(CheckpointError) as err:
        load_belief(path)
    assert_plain_refusal(str(err.value), "not a valid Hearts Lab checkpoint")


def test_real_checkpoints_pass_the_size_checks(tmp_path):
    for hidden in ([8], [64, 32], [1]):
        path = save(tmp_path / "real.pt", PolicyNet(hidden=hidden), {"rules": CLASSIC.to_dict()})
        assert list(load_net(path)[0].hidden) == hidden
    from agents import EXPERT_BELIEF
    from agents.belief import load_belief

    assert load_belief(EXPERT_BELIEF, rules=CLASSIC).net.hidden == (512, 512)  # the shipped belief model


def rules_payload(tmp_path: Path, rules) -> Path:
    """A real checkpoint whose metadata's rules are ``rules`` (``...``: no rules at all)."""
    path = checkpoint(tmp_path, "rules.pt")
    payload = torch.load(path, weights_only=True)
    meta = json.loads(payload["meta"])
    if rules is ...:
        del meta["rules"]
    else:
        meta["rules"] = rules
    payload["meta"] = json.dumps(meta)
    torch.save(payload, path)
    return path


UNUSABLE_RULES = {"none": ..., "text": "xy", "list": [1, 2], "pairs": [["target_score", 50]], "null": None,
                  "preset-list": {"preset": ["classic"]}, "preset-number": {"preset": 5},
                  "bad-option": {"target_score": "100"}}


@pytest.mark.parametrize("rules", UNUSABLE_RULES.values(), ids=UNUSABLE_RULES.keys())
def test_checkpoint_without_usable_rules_is_refused_whether_or_not_rules_are_asked_for(tmp_path, rules):
    path = rules_payload(tmp_path, rules)
    for asked in (None, CLASSIC):
        with pytest.raises(CheckpointError) as err:
            load_net(path, asked)
        assert_plain_refusal(str(err.value), "not a valid Hearts Lab checkpoint")
        assert "rules" in str(err.value)


def test_export_of_a_checkpoint_without_rules_is_one_line(tmp_path, capsys):
    for module in ("onnx", "onnxscript", "onnxruntime"):
        pytest.importorskip(module)
    path = rules_payload(tmp_path, ...)
    try:
        code = cli.main(["export", str(path), "--out", str(tmp_path / "out")])
    except SystemExit as exit_:
        code = exit_.code
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert_plain_refusal(err, "rules")


def test_checkpoint_rules_are_given_back_validated(tmp_path):
    path = rules_payload(tmp_path, {"preset": "quick"})
    _, meta = load_net(path)
    assert Rules.from_dict(meta["rules"]) == Rules.preset("quick")

# ---- deal sets ---------------------------------------------------------------------------------

def deal_arrays(tmp_path: Path, n: int = 4) -> dict[str, np.ndarray]:
    path = DealSet.generate(CLASSIC, n, seed=5).save(tmp_path / "real.npz")
    with np.load(path) as data:
        return dict(data)


def write_npz(path: Path, arrays: dict[str, np.ndarray], zeros: tuple[str, int] | None = None,
              header_shape: tuple[str, tuple[int, ...]] | None = None) -> Path:
    """An .npz as np.savez_compressed writes it. ``zeros=(key, count)``: that member holds ``count``
    uint64 zeros, streamed so this test never holds them. ``header_shape=(key, shape)``: that
    member's header declares ``shape`` over its real (small) data."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as zf:
        for key, value in arrays.items():
            with zf.open(key + ".npy", "w", force_zip64=True) as member:
                if zeros and key == zeros[0]:
                    header = {"descr": "<u8", "fortran_order": False, "shape": (zeros[1],)}
                    np.lib.format.write_array_header_1_0(member, header)
                    block = bytes(8 << 20)
                    for _ in range(zeros[1] * 8 // len(block)):
                        member.write(block)
                elif header_shape and key == header_shape[0]:
                    header = np.lib.format.header_data_from_array_1_0(value)
                    header["shape"] = header_shape[1]
                    np.lib.format.write_array_header_1_0(member, header)
                    member.write(value.tobytes())
                else:
                    np.lib.format.write_array(member, np.asanyarray(value), allow_pickle=False)
    return path


def test_the_npz_writer_of_these_tests_writes_what_the_loader_reads(tmp_path):
    path = write_npz(tmp_path / "copy.npz", deal_arrays(tmp_path))
    assert len(DealSet.load(path)) == 4  # the helper writes files the loader reads


def test_zip_bomb_deal_set_is_refused_before_it_is_inflated(tmp_path):
    arrays = deal_arrays(tmp_path)
    count = 16 << 20  # 128 MB of zeros as "dead" cards, compressed to about 600 KB
    bomb = write_npz(tmp_path / "bomb.npz", arrays, zeros=("dead", count))
    assert bomb.stat().st_size < 2_000_000
    tracemalloc.start()  # numpy reports its array memory to tracemalloc
    try:
        with pytest.raises(DealSetError) as err:
            DealSet.load(bomb)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    message = str(err.value)
    assert_plain_refusal(message, "not a valid deal set")
    assert "dead" in message and str(count * 8) in message
    assert peak < 8 << 20, f"{peak} bytes allocated before refusing"


def test_deal_set_member_whose_header_claims_more_than_it_holds_is_refused(tmp_path):
    # Header says 2**40 numbers (8 TiB), the member holds 4: numpy would allocate by the header.
    arrays = deal_arrays(tmp_path)
    path = write_npz(tmp_path / "liar.npz", arrays, header_shape=("dead", (1 << 40,)))
    with pytest.raises(DealSetError) as err:
        DealSet.load(path)
    assert_plain_refusal(str(err.value), "not a valid deal set")


@pytest.mark.parametrize("key, value", [
    ("seeds", np.zeros((4, 3), dtype=np.uint64)),  # wrong number of dimensions
    ("seeds", np.zeros(5, dtype=np.uint64)),  # more seeds than hand numbers
    ("seeds", np.zeros(4, dtype=np.float64)),  # wrong type
    ("dealt", np.zeros((4, 4, 2), dtype=np.uint64)),
    ("rules_json", np.zeros(3)),
    ("format_version", np.arange(3)),
])
def test_deal_set_arrays_of_the_wrong_shape_or_type_are_refused(tmp_path, key, value):
    arrays = deal_arrays(tmp_path)
    arrays[key] = value
    with pytest.raises(DealSetError) as err:
        DealSet.load(write_npz(tmp_path / "odd.npz", arrays))
    assert_plain_refusal(str(err.value), "deal set")


def test_deal_set_with_pickled_objects_is_refused_without_running_them_or_unsafe_advice(tmp_path):
    marker = tmp_path / "code-ran"
    arrays = deal_arrays(tmp_path)
    arrays["seeds"] = np.array([Marker(marker)] * 4, dtype=object)
    objects = tmp_path / "objects.npz"
    np.savez(objects, **arrays)  # numpy pickles object arrays when saving
    raw_pickle = tmp_path / "raw.npz"
    raw_pickle.write_bytes(pickle.dumps(Marker(marker)))
    npy = tmp_path / "single.npz"
    np.save(npy, np.array([Marker(marker)], dtype=object))  # a lone .npy with pickled data
    Path(str(npy) + ".npy").rename(npy)
    long_header = tmp_path / "long-header.npz"  # numpy's refusal of it advises allow_pickle=True
    with zipfile.ZipFile(long_header, "w") as zf:
        for key in arrays:
            zf.writestr(key + ".npy", b"\x93NUMPY\x01\x00" + (20_000).to_bytes(2, "little") + b" " * 20_000)
    for path in (objects, raw_pickle, npy, long_header):
        with pytest.raises(DealSetError) as err:
            DealSet.load(path)
        assert_plain_refusal(str(err.value), "deal set")
    assert not marker.exists()



@pytest.mark.parametrize("rules_json", ['"xy"', "[1, 2]", "5", "null", '{"preset": ["classic"]}',
                                        '{"preset": 5}', '{"target_score": "100"}', "{"],
                         ids=["text", "list", "number", "null", "preset-list", "preset-number", "bad-option", "json"])
def test_deal_set_whose_rules_are_unusable_is_one_line(tmp_path, capsys, rules_json):
    arrays = deal_arrays(tmp_path)
    arrays["rules_json"] = np.array(rules_json)
    path = write_npz(tmp_path / "rules.npz", arrays)
    with pytest.raises(DealSetError) as err:
        DealSet.load(path)
    assert_plain_refusal(str(err.value), "rules")
    try:
        code = cli.main(["arena", "random", "--vs", "random", "--deal-set", str(path), "--no-progress"])
    except SystemExit as exit_:
        code = exit_.code
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1, err


def test_one_filter_hides_every_library_advice_to_load_unsafely():
    from hearts_env.settings_files import first_line_without_advice

    messages = [("Weights only load failed. Re-running `torch.load` with `weights_only` set to `False` will likely "
                 "succeed, but it can result in arbitrary code execution. Do it only if you trust the source"),
                "Object arrays cannot be loaded when allow_pickle=False",
                "Header length 20000 too big; if you trust this file, can still be loaded with allow_pickle=True",
                "unpickling is unsafe", "pickle.load refused"]
    for message in messages:
        line = first_line_without_advice(ValueError(message + "\nsecond line"))
        assert "\n" not in line and line
        for words in UNSAFE_ADVICE:
            assert words not in line.lower(), (message, line)
    assert first_line_without_advice(ValueError("File is not a zip file\nmore")) == "File is not a zip file"
    assert first_line_without_advice(EOFError()) == "EOFError"

# ---- game records (hearts replay, hearts play --resume / --deal) -------------------------------

RANDOM_BYTES = np.random.default_rng(1).integers(0, 256, 4096, dtype=np.uint8).tobytes()
LATIN_1 = ('{"type": "header", "format": "play", "rules_name": "Café à la carte"}\n').encode("latin-1")
DEEP = b"[" * 100_000 + b"\n"  # valid UTF-8, nested deeper than the JSON reader recurses


@pytest.mark.parametrize("content", [RANDOM_BYTES, LATIN_1, DEEP], ids=["random-bytes", "latin-1", "deep-json"])
@pytest.mark.parametrize("command", [["replay", "--no-color"], ["play", "--no-color", "--resume"]])
def test_unreadable_record_is_one_line_not_a_traceback(tmp_path, capsys, content, command):
    path = tmp_path / "game.jsonl"
    path.write_bytes(content)
    assert cli.main([*command, str(path)]) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"hearts {command[0]}: error: {path}"), captured.err
    assert "Traceback" not in captured.err + captured.out


HEADER = {"type": "header", "format": "play", "rules": CLASSIC.to_dict(), "seed": 1}
WRONG_SHAPES = {  # game lines with a value of the wrong type where the replay looks
    "hands-text": {"hands": "abc", "deal_seed": "1"},
    "hand-text": {"hands": ["x", 5], "deal_seed": "1"},
    "dealt-number": {"hands": [{"hands[0].number": 0, "dealt": 5}], "deal_seed": "1"},
    "seats-number": {"seats": 5, "hands": [{"hands[0].number": 0}], "deal_seed": "1"},
}


@pytest.mark.parametrize("game", WRONG_SHAPES.values(), ids=WRONG_SHAPES.keys())
@pytest.mark.parametrize("command", [["replay", "--no-color"], ["play", "--no-color", "--resume"]])
def test_record_of_the_wrong_shape_is_one_line_not_a_traceback(tmp_path, capsys, game, command):
    path = tmp_path / "game.jsonl"
    path.write_text(json.dumps(HEADER) + "\n" + json.dumps({"type": "game", **game}) + "\n")
    assert cli.main([*command, str(path)]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"hearts {command[0]}: error: {path}"), lines


def test_resumed_record_whose_specs_are_not_a_list_is_one_line(tmp_path, capsys):
    from hearts_app.session import records
    from hearts_app.session.match import Match

    path = records.save(tmp_path / "game.jsonl", Match.new(CLASSIC, 3), ["human", "random", "random", "random"])
    header, game = [json.loads(line) for line in path.read_text().splitlines()]
    game["specs"] = 5
    path.write_text(json.dumps(header) + "\n" + json.dumps(game) + "\n")
    assert cli.main(["play", "--no-color", "--resume", str(path)]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert lines == [f"hearts play: error: {path}, game 1: specs must be 4 texts, one per seat, got number 5"]


@pytest.mark.parametrize("content", [RANDOM_BYTES, LATIN_1, DEEP, b"hands: [\n  - : :\n\t x"],
                         ids=["random-bytes", "latin-1", "deep", "multi-line-yaml-error"])
def test_unreadable_deal_file_for_play_is_one_line(tmp_path, capsys, content):
    path = tmp_path / "deal.yaml"
    path.write_bytes(content)
    assert cli.main(["play", "--no-color", "--opponents", "random", "--deal", str(path)]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"hearts play: error: --deal {path}"), lines


#: What reads a file named on the command line, given a device that never ends (``{path}``), in a child
#: process limited to 2 GB of address space: a reader that reads it whole fails there (MemoryError).
ENDLESS_READERS = {
    "replay": "from hearts_app import cli; sys.exit(cli.main(['replay', '--no-color', '{path}']))",
    "play --resume": "from hearts_app import cli; sys.exit(cli.main(['play', '--no-color', '--resume', '{path}']))",
    "play --deal": "from hearts_app import cli; sys.exit(cli.main(['play', '--no-color', '--opponents', 'random', "
                   "'--deal', '{path}']))",
    "seat record": "from hearts_env import seat_record\n"
                   "try:\n    seat_record.parse(pathlib.Path('{path}'))\n"
                   "except seat_record.SeatRecordError as err:\n    print(err, file=sys.stderr); sys.exit(2)",
    "levels.json": "from export import web\n"
                   "try:\n    web.find_levels(pathlib.Path('{path}').parent)\n"
                   "except web.WebBuildError as err:\n    print(err, file=sys.stderr); sys.exit(2)",
}


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero")
@pytest.mark.parametrize("reader", ENDLESS_READERS)
def test_a_file_that_is_a_device_is_refused_without_reading_it(tmp_path, reader):
    endless = tmp_path / "levels.json"  # (the name find_levels reads; any name for the others)
    endless.symlink_to("/dev/zero")
    script = ("import pathlib, resource, sys\n"
              "resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))\n"
              + ENDLESS_READERS[reader].format(path=endless))
    run = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=300,
                         check=False, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert run.returncode == 2, run.stderr[-2000:]
    assert "not a file" in run.stderr and "Traceback" not in run.stderr, run.stderr[-2000:]


# ---- exported policies (onnx:PATH) -------------------------------------------------------------

@pytest.mark.parametrize("manifest", [None, RANDOM_BYTES, LATIN_1, DEEP, b'{"format": 5}',
                                      b'{"format": "hearts-lab-policy", "format_version": 1, "observation": []}'],
                         ids=["no-manifest", "random-bytes", "latin-1", "deep-json", "other-format", "odd-types"])
def test_garbage_onnx_model_or_manifest_is_one_line(tmp_path, manifest):
    pytest.importorskip("onnxruntime")
    from agents.onnx_policy import OnnxPolicyAgent, PolicyManifestError

    model = tmp_path / "garbage.onnx"
    model.write_bytes(RANDOM_BYTES)
    if manifest is not None:
        (tmp_path / "garbage.json").write_bytes(manifest)
    with pytest.raises(PolicyManifestError) as err:
        OnnxPolicyAgent(model)
    assert_plain_refusal(str(err.value), "garbage")
    with pytest.raises(AgentSpecError) as err:
        make(f"onnx:{model}")
    assert_plain_refusal(str(err.value), "garbage")


@pytest.mark.parametrize("rules", ["xy", [1, 2], None, {"preset": ["classic"]}, {"target_score": "100"}],
                         ids=["text", "list", "null", "preset-list", "bad-option"])
def test_manifest_with_unusable_rules_is_refused(tmp_path, rules):
    pytest.importorskip("onnxruntime")
    import shutil

    from agents.onnx_policy import OnnxPolicyAgent, PolicyManifestError

    shipped = ROOT / "agents" / "policies" / "ppo_classic"
    model = tmp_path / "policy.onnx"
    shutil.copy(shipped / "policy.onnx", model)
    manifest = json.loads((shipped / "policy.json").read_text())
    manifest["rules"] = rules
    (tmp_path / "policy.json").write_text(json.dumps(manifest))
    with pytest.raises(PolicyManifestError) as err:
        OnnxPolicyAgent(model)
    assert_plain_refusal(str(err.value), "rules")


@pytest.mark.parametrize("changes", [{"observation": []}, {"model": "policy.onnx"},
                                     {"observation": {"version": 1, "layout": "abc"}}],
                         ids=["observation-list", "model-text", "layout-text"])
def test_manifest_with_values_of_the_wrong_type_is_refused(tmp_path, changes):
    from agents import onnx_policy
    from hearts_env.observe import OBS_DIM, OBS_VERSION

    model = tmp_path / "garbage.onnx"
    model.write_bytes(RANDOM_BYTES)
    manifest = {"format": onnx_policy.MANIFEST_FORMAT, "format_version": onnx_policy.MANIFEST_VERSION,
                "observation": {"version": OBS_VERSION, "dimension": OBS_DIM, "layout": onnx_policy.layout_entries()},
                "model": {}}
    if "layout" in str(changes):
        changes["observation"].update(dimension=OBS_DIM, version=OBS_VERSION)
    with pytest.raises(onnx_policy.PolicyManifestError) as err:
        onnx_policy.check_manifest({**manifest, **changes}, model)
    assert_plain_refusal(str(err.value), "garbage.json")


# ---- exported policies: graphs that are not what the exporter writes ----------------------------


def hand_built_policy(folder: Path, nodes=(), initializers=(), probabilities: str = "soft") -> Path:
    """An ONNX policy built by hand with the contract's inputs, outputs and metadata and a manifest
    that matches it: logits = observation @ w, masked by action_mask. ``nodes`` and ``initializers``
    are added, and ``probabilities`` names the tensor given out as the probabilities (the softmax
    ``soft`` by default; the tensor ``one`` is a float 1)."""
    from onnx import TensorProto, helper, numpy_helper

    from agents.base import sha256_file
    from hearts_env.observe import OBS_DIM

    graph = helper.make_graph(
        [helper.make_node("Gemm", ["observation", "w"], ["logits"]),
         helper.make_node("Where", ["action_mask", "logits", "masked"], ["scores"]),
         helper.make_node("ArgMax", ["scores"], ["action"], axis=1, keepdims=0),
         helper.make_node("Softmax", ["scores"], ["soft"], axis=1), *nodes,
         helper.make_node("Mul", [probabilities, "one"], ["probabilities"])],
        "policy",
        [helper.make_tensor_value_info("observation", TensorProto.FLOAT, ["batch", OBS_DIM]),
         helper.make_tensor_value_info("action_mask", TensorProto.BOOL, ["batch", 52])],
        [helper.make_tensor_value_info("action", TensorProto.INT64, ["batch"]),
         helper.make_tensor_value_info("probabilities", TensorProto.FLOAT, ["batch", 52])],
        [numpy_helper.from_array(np.zeros((OBS_DIM, 52), np.float32), "w"),
         numpy_helper.from_array(np.array(-1e9, np.float32), "masked"),
         numpy_helper.from_array(np.array(1, np.float32), "one"), *initializers],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=10)
    helper.set_model_props(model, {"hearts_lab.obs_version": "1", "hearts_lab.obs_dim": str(OBS_DIM)})
    path = folder / "policy.onnx"
    path.write_bytes(model.SerializeToString())
    manifest = json.loads((ROOT / "agents" / "policies" / "ppo_classic" / "policy.json").read_text())
    manifest["model"]["sha256"] = sha256_file(path)
    (folder / "policy.json").write_text(json.dumps(manifest))
    return path


def hostile_graph(kind: str):
    """(nodes, initializers, probabilities) of a graph that must not run, by kind."""
    from onnx import TensorProto, helper, numpy_helper

    def ints(name, values):
        return numpy_helper.from_array(np.array(values, np.int64), name)

    def summed_into_soft(tensor):  # the huge tensor feeds the probabilities, so nothing prunes it
        return [helper.make_node("ReduceSum", [tensor], ["total"], keepdims=0),
                helper.make_node("Add", ["soft", "total"], ["poisoned"])]

    batch_size = [helper.make_node("Shape", ["observation"], ["shape"]),
                  helper.make_node("Gather", ["shape", "zero"], ["n"]),
                  helper.make_node("Unsqueeze", ["n", "axis0"], ["n1"])]
    if kind == "constant-of-shape-4gib":  # 2**30 float32 zeros: 4 GiB when run
        return ([helper.make_node("ConstantOfShape", ["size"], ["huge"]), *summed_into_soft("huge")],
                [ints("size", [2**30])], "poisoned")
    if kind == "expand-to-a-billion":  # an exported operator, to a fixed size beyond the bound
        return ([helper.make_node("Expand", ["one", "size"], ["huge"]), *summed_into_soft("huge")],
                [ints("size", [2**15, 2**15])], "poisoned")
    if kind == "dimension-beyond-bound":
        return ([helper.make_node("Expand", ["one", "size"], ["huge"]), *summed_into_soft("huge")],
                [ints("size", [1, 2**31])], "poisoned")
    if kind == "batch-squared":  # [batch, batch]: 4 GiB at a batch of 32768
        return ([*batch_size, helper.make_node("Concat", ["n1", "n1"], ["square"], axis=0),
                 helper.make_node("Expand", ["one", "square"], ["huge"]), *summed_into_soft("huge")],
                [ints("zero", 0), ints("axis0", [0])], "poisoned")
    if kind == "output-grows-with-the-batch":  # probabilities [batch * batch, 52]
        return ([*batch_size, helper.make_node("Mul", ["n1", "n1"], ["rows"]),
                 helper.make_node("Concat", ["rows", "width"], ["size"], axis=0),
                 helper.make_node("Expand", ["one", "size"], ["grown"])],
                [ints("zero", 0), ints("axis0", [0]), ints("width", [52])], "grown")
    if kind == "weight-declared-huge":  # 2**36 floats declared, none stored
        big = TensorProto(name="big", data_type=TensorProto.FLOAT, dims=[2**12] * 3)
        return [], [big], "soft"
    if kind == "weight-in-another-file":
        far = numpy_helper.from_array(np.zeros(4, np.float32), "far")
        far.ClearField("raw_data")
        far.data_location = TensorProto.EXTERNAL
        far.external_data.add(key="location", value="../../../etc/passwd")
        return [], [far], "soft"
    raise ValueError(kind)


def test_a_hand_built_policy_of_exported_operators_plays(tmp_path):
    pytest.importorskip("onnxruntime")
    from agents.onnx_policy import OnnxPolicyAgent
    from hearts_env import engine, observe

    agent = OnnxPolicyAgent(hand_built_policy(tmp_path))
    state = engine.init(CLASSIC, 3, seed=1)
    mask = engine.legal_mask(state)
    assert mask[np.arange(3), agent.act(observe.observe(state), mask)].all()


@pytest.mark.parametrize("kind, says", [
    ("constant-of-shape-4gib", "operator ConstantOfShape; exported policies use only Add, ArgMax"),
    ("expand-to-a-billion", "'huge' has 1073741824 elements; at most 16777216"),
    ("dimension-beyond-bound", "'huge' has a dimension of 2147483648; fixed dimensions are at most 65536"),
    ("batch-squared", "'huge' grows with the batch more than once"),
    ("output-grows-with-the-batch", "'grown' has a dimension that is neither the batch nor a fixed size"),
    ("weight-declared-huge", "weight 'big' has 68719476736 elements"),
    ("weight-in-another-file", "weight 'far' is stored in another file"),
])
def test_a_hostile_graph_with_a_matching_manifest_is_refused_before_it_runs(tmp_path, monkeypatch, kind, says):
    onnxruntime = pytest.importorskip("onnxruntime")
    from agents.onnx_policy import OnnxPolicyAgent, PolicyManifestError

    def never(*args, **kwargs):
        raise AssertionError("onnxruntime was given the hostile model")

    monkeypatch.setattr(onnxruntime, "InferenceSession", never)
    nodes, initializers, probabilities = hostile_graph(kind)
    model = hand_built_policy(tmp_path, nodes, initializers, probabilities)
    with pytest.raises(PolicyManifestError) as err:
        OnnxPolicyAgent(model)
    assert_plain_refusal(str(err.value), f"{model}: not a policy this project exports ({says}")
    with pytest.raises(AgentSpecError) as err:
        make(f"onnx:{model}")
    assert_plain_refusal(str(err.value), says)


# ---- game records whose lines hold values of the wrong type or size ------------------------------

PYTHON_WORDS = ("Error:", "object has no attribute", "object is not", "int()", "set_int_max_str_digits",
                "NoneType", "'str'", "'int'", "'list'", "'dict'", "literal", "Traceback")


def played_record(tmp_path: Path) -> tuple[dict, dict]:
    """The header and game line of a play record of a few real moves."""
    from hearts_app.session import records
    from hearts_app.session.match import Match

    match = Match.new(CLASSIC, 3)
    for _ in range(8):
        match.step(match.legal()[0])
    path = records.save(tmp_path / "real.jsonl", match, ["human", "random", "random", "random"])
    header, game = [json.loads(line) for line in path.read_text().splitlines()]
    return header, game


def with_changes(game: dict, changes: dict) -> dict:
    """A copy of ``game`` with ``changes``: ``{"field": value}``, ``{"hands[0].field": value}``."""
    game = json.loads(json.dumps(game))
    for key, value in changes.items():
        if key.startswith("hands[0]."):
            game["hands"][0][key[len("hands[0]."):]] = value
        else:
            game[key] = value
    return game


# name -> (the changes to a real game line, or a function of the header and game line giving the
# file's lines; what the one-line error says)
BAD_LINES = {
    "a-line-of-text": (lambda header, game: [header, "hello"], "line 2 is text 'hello', not an object"),
    "a-line-of-a-list": (lambda header, game: [header, game, [1, 2]], "line 3 is a list of 2, not an object"),
    "hands-text": ({"hands": "abc"}, "hands must be a list of hand objects, at least one, got text 'abc'"),
    "a-hand-of-text": (lambda header, game: [header, dict(game, hands=["x"] + game["hands"])],
                       "hands[0] must be a hand object, got text 'x'"),
    "dealt-number": ({"hands[0].dealt": 5},
                     "hands[0].dealt must be 4 lists of cards, one per seat, got number 5"),
    "dealt-of-numbers": ({"hands[0].dealt": [1, 2, 3, 4]},
                         "hands[0].dealt must be 4 lists of cards, one per seat, got a list of 4 holding number 1"),
    "dead-number": ({"hands[0].dead": 5}, "hands[0].dead must be a list of cards"),
    "actions-number": ({"hands[0].actions": 5},
                       "hands[0].actions must be a list of [seat, card] pairs, got number 5"),
    "action-seat-half": ({"hands[0].actions": [[0.5, "2C"]]},
                         "hands[0].actions[0] must be a [seat, card] pair with a seat 0..3 and a card"),
    "hand-points-text": ({"hands[0].points": "x"},
                         "hands[0].points must be 4 whole numbers, one per seat, got text 'x'"),
    "hand-number-text": ({"hands[0].hand_number": "x"},
                         "hands[0].hand_number must be a whole number 0 or more, got text 'x'"),
    "seats-number": ({"seats": 5}, "seats must be 4 texts, one per seat, got number 5"),
    "seats-short": ({"seats": ["a"]}, "seats must be 4 texts, one per seat, got a list of 1"),
    "points-text": ({"points": "abc"}, "points must be 4 whole numbers, one per seat, got text 'abc'"),
    "scores-object": ({"scores": {"a": 1}}, "scores must be 4 whole numbers, one per seat, got an object"),
    "start-scores-half": ({"start_scores": [0.5] * 4},
                          "start_scores must be 4 whole numbers, one per seat, got a list of 4 holding number 0.5"),
    "hand-number-half": ({"hand_number": 0.5}, "hand_number must be a whole number 0 or more, got number 0.5"),
    "hand-number-negative": ({"hand_number": -1}, "hand_number must be a whole number 0 or more, got number -1"),
    "deal-seed-list": ({"deal_seed": [1]}, "deal_seed: a list of 1 is not a seed (0 to 2**64 - 1, in decimal digits)"),
    "deal-seed-5000-digits": ({"deal_seed": "9" * 5000},
                              "deal_seed: text '999999999999999999999...' (5000 characters) is not a seed"),
    "seed-text": ({"seed": "x"}, "seed must be a whole number 0 or more, got text 'x'"),
    "finished-text": ({"finished": "x"}, "finished must be true or false, got text 'x'"),
    "a-number-of-5000-digits": (
        lambda header, game: [header, json.dumps(game).replace('"points": [', '"points": [' + "9" * 5000 + ", ", 1)],
        "not a game record (a number of 5000 digits; a record's numbers have at most 30)"),
}


@pytest.mark.parametrize("name", BAD_LINES)
@pytest.mark.parametrize("command", [["replay", "--no-color"], ["play", "--no-color", "--resume"]])
def test_a_record_line_of_the_wrong_type_or_size_is_named_in_one_line(tmp_path, capsys, name, command):
    header, game = played_record(tmp_path)
    change, says = BAD_LINES[name]
    lines = change(header, game) if callable(change) else [header, with_changes(game, change)]
    path = tmp_path / "game.jsonl"
    path.write_text("".join((line if isinstance(line, str) and line[:1] == "{" else json.dumps(line)) + "\n"
                            for line in lines))
    assert cli.main([*command, str(path)]) == 2
    captured = capsys.readouterr()
    err = captured.err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"hearts {command[0]}: error: {path}"), captured.err
    assert says in err[0], err[0]
    for words in PYTHON_WORDS:
        assert words not in err[0], (words, err[0])


def test_the_record_these_tests_change_replays_and_resumes(tmp_path, capsys):
    header, game = played_record(tmp_path)
    path = tmp_path / "game.jsonl"
    path.write_text(json.dumps(header) + "\n\n" + json.dumps(game) + "\n")  # a blank line is no line
    assert cli.main(["replay", "--no-color", str(path)]) == 0
    from hearts_app.session import records

    match, _ = records.resume(path)
    assert len(match.hands[0]["actions"]) == 8


# ---- settings files: aliases and nesting -------------------------------------------------------

#: 394 bytes of YAML whose aliases expand to 9**9 (387 million) strings.
ALIAS_BOMB = "a: &a [" + ",".join(['"lol"'] * 9) + "]\n" + "".join(
    f"{b}: &{b} [" + ",".join([f"*{a}"] * 9) + "]\n" for a, b in zip("abcdefgh", "bcdefghi"))


@pytest.mark.parametrize("text, says", [
    (ALIAS_BOMB, "more than 100,000 values once its aliases are expanded"),
    ("[" * 100_000 + "]" * 100_000, "nested too deeply (at most 50 levels)"),
    ('{"moon": ' + "[" * 60 + "]" * 60 + "}", "nested too deeply (at most 50 levels)"),
])
def test_a_rules_or_recipe_file_that_is_an_alias_bomb_or_nested_deeply_is_refused_in_one_line(tmp_path, capsys,
                                                                                               text, says):
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    tracemalloc.start()
    for args in (["arena", "random", "--rules", str(path), "--deals", "1"], ["recipe", str(path)]):
        with pytest.raises(SystemExit) as exit_:
            cli.main(args)
        assert exit_.value.code == 2
        assert_plain_refusal(capsys.readouterr().err.strip().splitlines()[-1], says)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 200 * 2**20, f"{peak / 2**20:.0f} MiB to refuse it"


@pytest.mark.parametrize("value, says", [
    ("9" * 5000, "a number of more than 4,300 digits"),
    ("0x" + "f" * 5000, "a number of more than 4,300 digits"),
    ("2001-13-01", "a value cannot be read (month must be in 1..12)"),
    ("!!int x", "a value cannot be read"),
    ("!!timestamp x", "a value cannot be read"),
], ids=["long-number", "long-hex", "no-such-date", "int-tag", "timestamp-tag"])
def test_a_settings_value_python_cannot_build_is_refused_in_one_line(tmp_path, capsys, value, says):
    path = tmp_path / "rules.yaml"
    path.write_text(f"target_score: {value}\n")
    deal = tmp_path / "deal.yaml"
    deal.write_text(f"hand_number: {value}\nhands: []\n")
    for args in (["arena", "random", "--rules", str(path), "--deals", "1"],
                 ["arena", "random", "--rule", f"target_score={value}", "--deals", "1"]):
        with pytest.raises(SystemExit) as exit_:
            cli.main(args)
        assert exit_.value.code == 2
        assert_plain_refusal(capsys.readouterr().err.strip().splitlines()[-1], says)
    assert cli.main(["play", "--no-color", "--opponents", "random", "--deal", str(deal)]) == 2
    err = capsys.readouterr().err.strip()
    assert_plain_refusal(err, says)
    assert "set_int_max_str_digits" not in err


def test_a_settings_key_with_a_line_break_is_named_in_one_line(tmp_path, capsys):
    rules = tmp_path / "rules.yaml"
    rules.write_text('"a\\nb": 1\n')
    config = tmp_path / "config.yaml"
    config.write_text('run_name: x\nleague: {"a\\nb": 1}\nseed: [1, 2]\n')
    for args in (["arena", "random", "--rules", str(rules), "--deals", "1"], ["train", str(config)]):
        with pytest.raises(SystemExit) as exit_:
            cli.main(args)
        assert exit_.value.code == 2
        err = capsys.readouterr().err.strip()
        assert len(err.split("\n")) == 1 and "'a\\nb'" in err, err


def test_deeply_nested_levels_json_or_manifest_is_refused_by_the_web_build(tmp_path):
    from export.web import WebBuildError, find_levels

    (tmp_path / "levels.json").write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(WebBuildError, match="cannot be read"):
        find_levels(tmp_path)


@pytest.mark.parametrize("content", [b"[" * 100_000, b'{"meta": ' + b"9" * 5000 + b"}", RANDOM_BYTES, None],
                         ids=["deep", "long-number", "random-bytes", "folder"])
def test_arena_results_for_the_export_that_are_none_are_refused_in_one_line(tmp_path, content):
    from export.model import ExportError, _arena_section

    results = tmp_path / "results.json"
    if content is None:
        results.mkdir()
    else:
        results.write_bytes(content)
    with pytest.raises(ExportError) as refused:
        _arena_section(tmp_path / "policy.pt", results)
    assert_plain_refusal(str(refused.value), "--arena-results")
    assert "set_int_max_str_digits" not in str(refused.value)


def test_a_level_naming_a_path_with_a_nul_byte_is_refused_by_the_web_build(tmp_path):
    from export.web import WebBuildError, find_levels

    level = {"name": "easy", "model": "easy/policy.onnx", "manifest": "easy/\x00.json"}
    (tmp_path / "levels.json").write_text(json.dumps({"format": "hearts-lab-levels", "levels": [level]}))
    with pytest.raises(WebBuildError, match="a path with a NUL byte"):
        find_levels(tmp_path)


@pytest.mark.parametrize("rule_space", [[1], {"fields": [1]}, {"fields": {"moon": 5}}, "x"],
                         ids=["list", "fields-list", "field-number", "text"])
def test_a_manifest_whose_rule_space_is_not_one_is_refused_by_the_web_build(tmp_path, rule_space):
    from export.web import WebBuildError, _read_manifest

    manifest = json.loads((ROOT / "agents" / "policies" / "ppo_classic" / "policy.json").read_text())
    manifest["rule_space"] = rule_space
    path = tmp_path / "policy.json"
    path.write_text(json.dumps(manifest))
    with pytest.raises(WebBuildError, match="rule_space"):
        _read_manifest(path)


# ---- distillation shards -----------------------------------------------------------------------


def test_a_shard_whose_header_claims_more_than_it_holds_or_that_is_compressed_is_refused_before_allocating(tmp_path):
    from train.distill import SHARD_ARRAYS, load_shards

    arrays = {name: np.zeros((2, 3), dtype=np.float32) for name in SHARD_ARRAYS}
    arrays["meta"] = np.array(json.dumps({"rules": CLASSIC.to_dict()}))
    liar = tmp_path / "liar"
    liar.mkdir()
    # A stored (uncompressed) shard whose obs header claims 10**9 rows over the 2 it holds: the header keeps
    # its length (fewer pad spaces), and the zip's sizes and checksums are right, as a forger would make them.
    with zipfile.ZipFile(liar / "shard_0.npz", "w", zipfile.ZIP_STORED) as archive:
        for name, array in arrays.items():
            stream = io.BytesIO()
            np.lib.format.write_array(stream, array)
            data = stream.getvalue()
            if name == "obs":
                honest, claim = b"'shape': (2, 3), }", b"'shape': (1000000000, 3), }"
                at, end = data.index(honest), data.index(b"\n")
                data = (data[:at] + claim + b" " * (end - at - len(claim)) + data[end:])
                assert len(data) == len(stream.getvalue())
            archive.writestr(f"{name}.npy", data)
    tracemalloc.start()
    with pytest.raises(ValueError, match=r"is not a readable shard .*declares 12,000,000,000 bytes"):
        load_shards(liar)
    assert tracemalloc.get_traced_memory()[1] < 50 * 2**20
    tracemalloc.stop()
    bomb = tmp_path / "bomb"
    bomb.mkdir()
    np.savez_compressed(bomb / "shard_0.npz", **{**arrays, "obs": np.zeros((200_000, 629), dtype=np.float16)})
    with pytest.raises(ValueError, match=r"obs.npy is compressed; shards store their arrays uncompressed"):
        load_shards(bomb)
