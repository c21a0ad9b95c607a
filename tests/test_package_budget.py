"""The helper package stays small enough to read (issue 34): its reader-facing modules are counted
together (all but ``checks/``, ``data/``, the figure tools ``plotting.py`` and ``bertviz_offline.py``,
and the reader's fine-tuning tool ``finetune.py`` and ``classifier.py``, which no chapter
derives; ``results/__init__.py`` counts), and no top-level module may grow past 450 lines.

The issue asks for fewer than 2,800 counted lines (``GOAL``); ``CEILING`` is the count reached, 2,770,
after the data-set definitions moved to their home in ``data/`` (it may only go down: lower it when
a change saves lines, never raise it)."""

import pytest
from helpers import ROOT

PACKAGE = ROOT / "book" / "attention_to_bert"
# tools a reader runs, not models the chapters derive (each still under 450 lines)
NOT_COUNTED = ("plotting.py", "bertviz_offline.py", "finetune.py", "classifier.py")
# checks/ and data/ are sub-packages
GOAL = 2_800
# raised from 2,770 by chapter 6's layers on the page (issue 52: one sub-module a line, as the
# 76-column cells show them, and the public copy_layer_weights that from_torch uses); then past
# the goal, to 2,836, by issue 52's Seq2SeqTransformer on the page (its argument checks as three
# named functions at the boundary, +18) and chapter 8's NSP scorer `says_next`, moved from a
# notebook cell into the package with its tests (+27); then under the goal again, to 2,764, when
# issue 52 moved chapter 8's PairSampler into data/pairs.py and cut argument checks there.
CEILING = 2_764
MODULE_LIMIT = 450


def lines(path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def counted() -> dict[str, int]:
    # results/ is a folder of shipped results whose __init__ is a reader-facing module: counted
    modules = [*sorted(PACKAGE.glob("*.py")), PACKAGE / "results" / "__init__.py"]
    return {str(p.relative_to(PACKAGE)): lines(p) for p in modules if p.name not in NOT_COUNTED}


def test_the_reader_facing_modules_stay_under_the_ceiling():
    sizes = counted()
    assert "seq2seq.py" in sizes and "plotting.py" not in sizes
    total = sum(sizes.values())
    assert total <= CEILING, f"{total} counted lines (ceiling {CEILING}, goal < {GOAL}): {sizes}"


@pytest.mark.parametrize(
    "path", [*sorted(PACKAGE.glob("*.py")), PACKAGE / "results" / "__init__.py"], ids=str
)
def test_every_module_stays_under_450_lines(path):
    assert lines(path) < MODULE_LIMIT, f"{path.name}: {lines(path)} lines"
