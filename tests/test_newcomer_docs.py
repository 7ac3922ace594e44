"""What a newcomer reads before anything else (issue 38, item 8): the README's commands run
as written after `make install-test`, its host configuration names the agent, and
docs/console.md names every control the console shows and every operator command."""

import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
CONSOLE_DOC = ROOT / "docs" / "console.md"
TEMPLATES = ROOT / "templates" / "moderation"


def code_blocks(text: str, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", text, re.S)


def test_it_runs_every_readme_settle_agent_command_from_where_make_install_test_put_it():
    """A bare `settle-agent` after installing into .venv is "command not found", unless
    the block first puts .venv/bin on PATH."""
    installed = Path(sys.executable).parent / "settle-agent"
    assert installed.exists(), "make install-test puts settle-agent beside the venv's python"
    commands = 0
    for block in code_blocks(README.read_text(), "sh"):
        on_path = False
        for line in block.replace("\\\n", " ").splitlines():
            line = re.sub(r"\s+#.*", "", line)  # a comment may name it; it runs nothing
            if re.match(r'export PATH="\$PWD/\.venv/bin:\$PATH"', line):
                on_path = True
            for command in re.findall(r"(?:^|&&|;|\|)\s*(\S*settle-agent)\b", line):
                commands += 1
                assert command == ".venv/bin/settle-agent" or on_path, line
    assert commands >= 3


def test_it_names_the_agent_in_the_readmes_host_configuration():
    [host] = [json.loads(block) for block in code_blocks(README.read_text(), "json")
              if '"settle-agent' in block or "/settle-agent" in block]

    assert host["command"].endswith("/.venv/bin/settle-agent")
    assert host["args"] == ["mcp"]
    assert host["env"]["SETTLE_ACTOR_NAME"]


def test_it_says_in_the_readme_that_policies_are_set_and_what_a_purge_would_remove():
    readme = " ".join(README.read_text().split())

    assert "set or cleared here" in readme
    assert "forecast" in readme


def console_doc() -> str:
    """docs/console.md with its line breaks read as spaces, as a reader reads it."""
    return " ".join(CONSOLE_DOC.read_text().split())


def button_labels() -> set[str]:
    labels = set()
    for template in TEMPLATES.glob("*.html"):
        text = template.read_text()
        labels |= {" ".join(label.split())
                   for label in re.findall(r"<button[^>]*>([^<{]+)</button>", text)}
        labels |= set(re.findall(r'\bbutton="([^"]+)"', text))
    return labels


@pytest.mark.parametrize("label", sorted(button_labels()) + [
    "Set up two-factor",  # the link every console page carries
    "Own entry retention",  # the tokens page's column with its own Set and Clear
])
def test_it_names_each_control_the_console_shows(label):
    assert f"`{label}`" in console_doc()


def operator_commands() -> list[str]:
    return sorted(path.stem for app in ("moderation", "maintenance")
                  for path in (ROOT / app / "management" / "commands").glob("[a-z]*.py"))


@pytest.mark.parametrize("command", operator_commands())
def test_it_names_each_operator_command(command):
    assert re.search(rf"`{command}\b", console_doc()), command


@pytest.mark.parametrize("part", [
    "Retention policies", "Holds", "What a purge now would remove", "Erasures",
])
def test_it_describes_each_part_of_the_retention_page(part):
    assert f"*{part}*" in console_doc()
