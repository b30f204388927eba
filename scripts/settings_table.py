"""Print the README's configuration table from the one settings object."""

from __future__ import annotations

from pathlib import Path

from tierpilot.kit.settings import Settings

ROOT = Path(__file__).resolve().parents[1]

print("| variable | default | meaning |")
print("|---|---|---|")
for name, field in Settings.model_fields.items():
    default = field.default
    if isinstance(default, Path):
        default = f"./{default.relative_to(ROOT)}" if default.is_absolute() and ROOT in default.parents else default
    shown = "–" if default in ("", None) else f"`{default}`"
    meaning = (field.description or "").replace("|", "\\|")
    print(f"| `TIERPILOT_{name.upper()}` | {shown} | {meaning} |")
