"""deploy/settle.env.example names only settings Settle reads, and .env stays out of git."""

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
READERS = [ROOT / "board" / "settings.py", ROOT / "deploy" / "gunicorn.conf.py"]


def test_every_variable_of_the_example_is_one_settle_reads():
    example = (ROOT / "deploy" / "settle.env.example").read_text()
    named = re.findall(r"^#? ?([A-Z][A-Z_]+)=", example, flags=re.MULTILINE)
    read = "".join(path.read_text() for path in READERS)

    assert {"SECRET_KEY", "DATABASE_URL", "SETTLE_PUBLIC_URL"} <= set(named)
    assert [name for name in named if f'"{name}"' not in read] == []


def test_a_dot_env_file_is_ignored_by_git():
    result = subprocess.run(["git", "check-ignore", "-q", ".env"], cwd=ROOT)

    assert result.returncode == 0
