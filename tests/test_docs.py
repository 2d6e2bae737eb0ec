"""The documents a newcomer reads: every link resolves, and code points only at sections that exist.

Links: every relative link of README.md and docs/*.md names a file of the repository, and every
``#anchor`` a heading of that file (GitHub's anchor rule). Pointers: every "docs/<page>.md
section N" (or "N.M") written in code, tests or docs names a numbered heading of that page, and
nothing points at a design document or a ``shared`` folder outside the repository.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = sorted([ROOT / "README.md", *(ROOT / "docs").glob("*.md")])
CODE = [
    path
    for folder in ("src", "hookspecs", "tests", "bench", "examples")
    for path in sorted((ROOT / folder).rglob("*"))
    if path.suffix in {".py", ".js", ".mjs", ".css", ".html", ".toml"}
    and "vendor" not in path.parts
]

LINK = re.compile(r"\]\(([^)\s]+)\)")
POINTER = re.compile(r"docs/(\w+)\.md\s+section\s+(\d+(?:\.\d+)?)")


def anchors(path: Path) -> set[str]:
    """The anchors GitHub gives the headings of ``path``."""
    text = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.DOTALL)
    out = set()
    for heading in re.findall(r"^#{1,6} (.+)$", text, re.MULTILINE):
        out.add(re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-"))
    return out


def sections(path: Path) -> set[str]:
    """The numbers of the numbered headings of ``path`` (``3``, ``3.6``)."""
    text = path.read_text(encoding="utf-8")
    return set(re.findall(r"^#{2,3} (\d+(?:\.\d+)?)\.? ", text, re.MULTILINE))


def resolves(doc: Path, target: str) -> bool:
    """Whether the link ``target`` written in ``doc`` names a file (and heading) that exists."""
    if re.match(r"[a-z]+:", target):
        return True  # http:, https:, mailto: are not checked here
    file, _, anchor = target.partition("#")
    path = (doc.parent / file).resolve() if file else doc
    if not path.exists():
        return False
    return not anchor or path.suffix != ".md" or anchor in anchors(path)


@pytest.mark.parametrize("doc", DOCS, ids=lambda path: path.name)
def test_every_link_of_the_docs_resolves(doc: Path):
    text = doc.read_text(encoding="utf-8")
    assert [target for target in LINK.findall(text) if not resolves(doc, target)] == []


def test_code_points_only_at_sections_that_exist():
    missing = []
    for path in [*CODE, *DOCS]:
        text = path.read_text(encoding="utf-8")
        for page, number in POINTER.findall(" ".join(text.split())):
            doc = ROOT / "docs" / f"{page}.md"
            if not doc.is_file() or number not in sections(doc):
                missing.append(f"{path.relative_to(ROOT)}: docs/{page}.md section {number}")
    assert missing == []


def test_nothing_points_outside_the_repository_for_its_design():
    outside = re.compile(r"DESIGN section|DESIGN\.md|\.\./shared|\bshared/spec|spec/upstream")
    found = [
        str(path.relative_to(ROOT))
        for path in [*CODE, *DOCS]
        if outside.search(path.read_text(encoding="utf-8")) and path != Path(__file__).resolve()
    ]
    assert found == []


PAGE = re.compile(r"docs/([\w-]+)\.md")
QUOTED = re.compile(r'docs/([\w-]+)\.md,\s+"([^"]+)"')
HISTORY = re.compile(r"\bissues?\s+#?\d+", re.IGNORECASE)


def headings(path: Path) -> set[str]:
    """The text of every heading of ``path``."""
    text = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.DOTALL)
    return {heading.strip() for heading in re.findall(r"^#{1,6} (.+)$", text, re.MULTILINE)}


def test_code_names_only_pages_and_headings_that_exist():
    missing = []
    for path in CODE:
        text = " ".join(path.read_text(encoding="utf-8").replace("#:", " ").split())
        for page in PAGE.findall(text):
            if not (ROOT / "docs" / f"{page}.md").is_file():
                missing.append(f"{path.relative_to(ROOT)}: docs/{page}.md")
        for page, heading in QUOTED.findall(text):
            doc = ROOT / "docs" / f"{page}.md"
            if doc.is_file() and heading not in headings(doc):
                missing.append(f'{path.relative_to(ROOT)}: docs/{page}.md, "{heading}"')
    assert missing == []


def test_the_code_speaks_design_not_history():
    # A docstring that says "issue 11 item 2" means nothing to the next engineer: it says what
    # the code does and points at a section of docs/.
    found = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for folder in ("src", "hookspecs")
        for path in sorted((ROOT / folder).rglob("*"))
        if path.suffix in {".py", ".js", ".css", ".html", ".toml"}
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if HISTORY.search(line)
    ]
    assert found == []
