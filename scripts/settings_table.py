"""Print the README's configuration table from the one settings object, grouped by subject as the class is."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

from tierpilot.kit.settings import Settings

ROOT = Path(__file__).resolve().parents[1]


def subjects() -> dict[str, str]:
    """Each field's subject: the comment that opens its block (a comment line after a blank line)."""
    found: dict[str, str] = {}
    subject, blank = "", True
    for line in inspect.getsource(Settings).splitlines():
        stripped = line.strip()
        if stripped.startswith("#") and blank:
            subject = stripped.lstrip("# ").split(":")[0]
        match = re.match(r"    ([a-z_0-9]+): ", line)
        if match:
            found[match.group(1)] = subject
        blank = stripped == ""
    return found


print("| variable | default | meaning |")
print("|---|---|---|")
of = subjects()
current = None
for name, field in Settings.model_fields.items():
    if of.get(name) != current:
        current = of.get(name)
        print(f"| **{current}** | | |")
    default = field.default
    if isinstance(default, Path):
        default = f"./{default.relative_to(ROOT)}" if default.is_absolute() and ROOT in default.parents else default
    shown = "–" if default in ("", None) else f"`{default}`"
    meaning = (field.description or "").replace("|", "\\|")
    print(f"| `TIERPILOT_{name.upper()}` | {shown} | {meaning} |")
