"""The helper package stays small enough to read (issue 34): its reader-facing modules are counted
together (the top-level modules and ``results/__init__.py``; not the sub-packages ``checks/``,
``data/`` and ``figures/`` (the browser figures: movable figures, offline bertviz views), nor the
heatmap tool ``plotting.py`` or the reader's fine-tuning tool ``finetune.py``, ``labelled.py``,
``classifier.py``, which no chapter derives), and no top-level or ``figures/`` module may grow past
450 lines.

The issue asks for fewer than 2,800 counted lines (``GOAL``); ``CEILING`` is the count reached (it
may only go down: lower it when a change saves lines, never raise it)."""

import pytest
from helpers import ROOT

PACKAGE = ROOT / "book" / "attention_to_bert"
# tools a reader runs, not models the chapters derive (each still under 450 lines)
NOT_COUNTED = ("plotting.py", "finetune.py", "labelled.py", "classifier.py")
# checks/, data/ and figures/ are sub-packages: only the top-level modules are counted
GOAL = 2_800
# raised from 2,770 by chapter 6's layers on the page (issue 52: one sub-module a line, as the
# 76-column cells show them, and the public copy_layer_weights that from_torch uses); then past
# the goal, to 2,836, by issue 52's Seq2SeqTransformer on the page (its argument checks as three
# named functions at the boundary, +18) and chapter 8's NSP scorer `says_next`, moved from a
# notebook cell into the package with its tests (+27); under the goal again, to 2,764, when
# issue 52 moved chapter 8's PairSampler into data/pairs.py and cut argument checks there; then to
# 2,650 when interactive.py (114 lines) moved into figures/ (issue 52: rooms with one job), an
# exclusion, not lines saved; 2,644 after chapter 6's checks moved to its public boundary; 2,640
# in round 7, where finetuning.py's 68 lines moved into classifier.py (an exclusion, not lines
# saved) and the unchecked twins of the checked functions (issue 52: checks at the right depth)
# took 64 of them; 2,637 once chapter 6's teaching-size Seq2SeqTransformer moved its checks into
# one boundary function.
CEILING = 2_637
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
    assert not any(name.startswith(("figures", "checks", "data")) for name in sizes)
    total = sum(sizes.values())
    assert total <= CEILING, f"{total} counted lines (ceiling {CEILING}, goal < {GOAL}): {sizes}"


# the top-level modules, results/__init__.py and the figures' modules (not their empty __init__)
LIMITED = [
    *sorted(PACKAGE.glob("*.py")),
    PACKAGE / "results" / "__init__.py",
    *sorted(PACKAGE.glob("figures/[!_]*.py")),
]


@pytest.mark.parametrize("path", LIMITED, ids=str)
def test_every_module_stays_under_450_lines(path):
    assert lines(path) < MODULE_LIMIT, f"{path.name}: {lines(path)} lines"
