"""Each chapter is a lesson and a lab (DESIGN.md, "Lesson and lab"): the lesson teaches, the lab
proves. The lab's form (one section per claim: claim, how it was tested, result, what it does not
show), the links both ways, and the table of contents (the lessons, then a part "Labs")."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest
import yaml
from helpers import CHAPTERS, LABS, ROOT, lab_of
from myst_parser.mdit_to_docutils.base import default_slugify

PARTS = ("**Claim.**", "**How we tested it.**", "**Result.**", "**What it does not show.**")
LINK = re.compile(r"\]\((?P<target>[^)\s]+)\)")


def markdown(path: Path) -> list[str]:
    return [c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "markdown"]


def headings(path: Path, level: str = "## ") -> list[str]:
    return [
        line[len(level) :].strip()
        for source in markdown(path)
        for line in source.splitlines()
        if line.startswith(level)
    ]


def links_to(path: Path, target: str) -> list[str]:
    """The anchors of every link of ``path`` to the notebook ``target`` (``labs/01_x_lab``): as an
    author writes it (``labs/01_x_lab.ipynb#a``) or as the formatter stores it for a reader who
    opened the notebook alone (the published page, ``.../labs/01_x_lab.html#a``)."""
    anchors = []
    for source in markdown(path):
        for match in LINK.finditer(source):
            url, _, anchor = match["target"].partition("#")
            if re.search(rf"(^|/){re.escape(target)}\.(ipynb|html)$", url):
                anchors.append(anchor)
    return anchors


def lab_sections(lab: Path) -> dict[str, str]:
    """Each section of a lab, ``Lab N.k — claim``, and its Markdown up to the next section."""
    sections: dict[str, str] = {}
    current = None
    for source in markdown(lab):
        for line in source.splitlines():
            if line.startswith("## "):
                current = line[3:].strip()
                sections[current] = ""
            elif current is not None:
                sections[current] += line + "\n"
    return sections


def test_every_lab_belongs_to_a_lesson():
    lessons = {lab_of(lesson) for lesson in CHAPTERS}
    assert [lab.name for lab in LABS if lab not in lessons] == []


@pytest.mark.parametrize("lab", LABS, ids=lambda path: path.stem)
def test_a_lab_has_one_section_per_claim_in_four_parts(lab):
    number = int(lab.name[:2])
    title = headings(lab, "# ")
    assert len(title) == 1 and title[0].startswith(f"How we know: chapter {number} — "), title
    sections = {name: text for name, text in lab_sections(lab).items() if name.startswith("Lab ")}
    assert sections, f"{lab.name} has no section 'Lab {number}.1 — ...'"
    numbers = [re.match(rf"Lab {number}\.(\d+) — \S", name) for name in sections]
    assert all(numbers), f"{lab.name}: sections not named 'Lab {number}.k — claim': {sections}"
    assert [int(m[1]) for m in numbers] == list(range(1, len(sections) + 1))
    for name, text in sections.items():
        places = [text.find(part) for part in PARTS]
        assert -1 not in places and places == sorted(places), (
            f"{lab.name}, {name}: the four parts {PARTS} in this order"
        )
    assert links_to(lab, f"{lab.name[: -len('_lab.ipynb')]}"), f"{lab.name}: no link to its lesson"


@pytest.mark.parametrize("lab", LABS, ids=lambda path: path.stem)
def test_the_lesson_links_to_its_lab_sections_and_every_anchor_exists(lab):
    lesson = lab.parent.parent / lab.name.replace("_lab.ipynb", ".ipynb")
    anchors = links_to(lesson, f"labs/{lab.stem}")
    assert anchors, f"{lesson.name} never links to {lab.name} ('How we know: Lab N.k')"
    slugs = {default_slugify(name) for name in headings(lab) + headings(lab, "# ")}
    missing = sorted({a for a in anchors if a and a not in slugs})
    assert missing == [], f"{lesson.name} links to sections {lab.name} does not have: {missing}"
    back = {a for a in links_to(lab, lesson.stem) if a}
    lesson_slugs = {default_slugify(h) for h in headings(lesson) + headings(lesson, "### ")}
    assert back <= lesson_slugs, f"{lab.name} links to sections of {lesson.name} that do not exist"


def test_the_table_of_contents_has_the_lessons_then_a_part_of_labs():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    parts = {part["caption"]: [c["file"] for c in part["chapters"]] for part in toc["parts"]}
    assert parts["Chapters"] == [f"book/{lesson.stem}" for lesson in CHAPTERS]
    if LABS:
        captions = [part["caption"] for part in toc["parts"]]
        assert captions.index("Labs") == captions.index("Chapters") + 1
        assert parts["Labs"] == [f"book/labs/{lab.stem}" for lab in LABS]
