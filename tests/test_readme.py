"""The README and the command line agree: what the README lists exists, and every option explains itself."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from hearts_app import cli

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def _subcommands() -> dict[str, argparse.ArgumentParser]:
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def test_every_option_of_every_subcommand_has_help_text():
    missing = []
    for name, parser in _subcommands().items():
        stack = [(name, parser)]
        while stack:
            label, p = stack.pop()
            for action in p._actions:
                if isinstance(action, argparse._SubParsersAction):
                    stack += [(f"{label} {n}", q) for n, q in action.choices.items()]
                elif action.option_strings and action.help in (None, ""):
                    missing.append(f"hearts {label} {action.option_strings[0]}")
    assert not missing, f"options without help text: {missing}"


def test_readme_names_every_subcommand():
    listed = re.search(r"Subcommands: (.*?)\(`hearts --help`\)", README, re.S).group(1)
    named = set(re.findall(r"`(\w+)`", listed))
    assert named == set(_subcommands())


def test_readme_layout_names_every_config():
    layout = README[README.index("## Layout"):]
    line = next(line for line in layout.splitlines() if line.startswith("configs/"))
    for config in (ROOT / "configs").glob("*.yaml"):
        assert config.stem in line, f"README's layout leaves out configs/{config.name}"


def _readme_commands() -> list[list[str]]:
    """Every `hearts ...` line in the README's shell blocks, split as the shell would."""
    import shlex

    commands = []
    for block in re.findall(r"```bash\n(.*?)```", README, re.S):
        for line in block.splitlines():
            words = shlex.split(line, comments=True)
            if words and words[0] in ("hearts", ".venv/bin/hearts"):
                commands.append(words[1:])
    return commands


def test_every_hearts_command_in_the_readme_parses_and_its_files_exist():
    commands = _readme_commands()
    assert len(commands) >= 10
    parser = cli.build_parser()
    for argv in commands:
        try:
            parser.parse_args(argv)
        except SystemExit as exit:  # argparse's way of refusing
            raise AssertionError(f"README: `hearts {' '.join(argv)}` is refused by the parser") from exit
        for word in argv:  # files the README names as inputs of the repository exist
            if re.match(r"(configs|agents)/\S+\.\w+$", word):
                assert (ROOT / word).is_file(), f"README: `hearts {' '.join(argv)}` names a missing {word}"
