"""The README stays true: it starts with the two commands and documents every setting."""

from __future__ import annotations

from pathlib import Path

from tierpilot.kit.settings import Settings

README = (Path(__file__).resolve().parents[2] / "README.md").read_text()


def test_readme_starts_with_the_two_commands() -> None:
    first_block = README.split("```")[1]
    commands = [line.split("#")[0].strip() for line in first_block.splitlines()[1:] if line.strip()]
    assert commands == ["make run", "make test"]


def test_every_setting_is_documented() -> None:
    missing = [f"TIERPILOT_{name.upper()}" for name in Settings.model_fields
               if f"TIERPILOT_{name.upper()}" not in README]
    assert missing == []


def test_configuration_table_matches_the_settings_object() -> None:
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    table = subprocess.run([sys.executable, str(root / "scripts" / "settings_table.py")], capture_output=True,
                           text=True, check=True).stdout
    assert table.strip() in README, "regenerate the README table: .venv/bin/python scripts/settings_table.py"
