"""Exercise 7.5's solution, the task heads of section 7.7, is code in a folded Markdown block (the
student edition must not run it), so no notebook run executes it. Here it runs as written on MiniLM:
its own asserts (the best span lies inside the passage, start <= end), the loss it prints against its
comment (an untrained head: about ln of the passage's length), and what the exercise asks of each
head (output shapes; the span head scores -1e4 exactly outside the passage)."""

import contextlib
import io
import math
import re
import textwrap

import nbformat
import pytest
import torch
import torch.nn.functional as F
from helpers import ROOT
from torch import nn

from attention_to_bert.bert import load_minilm

CHAPTER = ROOT / "book" / "07_bert.ipynb"


def solution_code() -> str:
    """The indented code of the solution that follows the heading 'Exercise 7.5'."""
    cells = nbformat.read(CHAPTER, as_version=4).cells
    start = next(i for i, c in enumerate(cells) if "### Exercise 7.5" in c.source)
    solution = next(c for c in cells[start:] if "solution" in c.metadata.get("tags", []))
    blocks = re.findall(r"((?:^(?: {4}.*)?\n)+)", solution.source, re.MULTILINE)
    code = max(blocks, key=len)  # the one long block: classes, helpers and the check
    return textwrap.dedent(code)


@pytest.fixture(scope="module")
def solved():
    """The names the solution defines and what it printed, run on MiniLM as in the chapter."""
    model, tokenizer = load_minilm()
    names = {"torch": torch, "nn": nn, "F": F, "math": math, "model": model, "tokenizer": tokenizer}
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(solution_code(), names)  # raises if one of its asserts fails
    return names, printed.getvalue()


@pytest.mark.recomputes
def test_the_printed_loss_is_its_comment_and_about_a_uniform_guess(solved):
    names, printed = solved
    expected = re.search(r"# (\d\.\d+) vs ln (\d+) = (\d\.\d+)", solution_code())
    got = re.search(r"(\d\.\d+) vs ln (\d+) = (\d\.\d+)", printed)
    assert got, printed
    loss, positions, uniform = float(got[1]), int(got[2]), float(got[3])
    assert positions == int(expected[2]) == 9  # "The fox slept under the old oak tree ."
    assert uniform == pytest.approx(math.log(9), abs=1e-3)
    assert loss == pytest.approx(float(expected[1]), abs=0.02)  # the comment, CPU rounding aside
    assert abs(loss - uniform) < 0.1  # the prose: close to ln(passage positions)


def test_each_head_returns_the_shapes_the_exercise_asks_for(solved):
    names, _ = solved
    model, tokenizer = names["model"], names["tokenizer"]
    batch = tokenizer(
        ["Where did the fox sleep?", "Who?"],
        ["The fox slept under the old oak tree.", "Ann met Bo."],
        padding=True,
        return_tensors="pt",
    )
    size = batch["input_ids"].shape
    torch.manual_seed(0)
    with torch.no_grad():
        labels = names["SequenceClassifier"](model, 3).eval()(**batch)
        tags = names["TokenTagger"](model, 5).eval()(**batch)
        start, end = names["SpanExtractor"](model).eval()(**batch)
    assert labels.shape == (2, 3) and tags.shape == (*size, 5)
    assert start.shape == end.shape == size
    # -1e4 exactly outside the passage: the question, the padding and the passage's final [SEP]
    mask, segments = batch["attention_mask"].bool(), batch["token_type_ids"].bool()
    last = torch.arange(size[1]) == (mask.sum(1, keepdim=True) - 1)
    passage = segments & mask & ~last
    for scores in (start, end):
        assert (scores[~passage] == -1e4).all() and (scores[passage] > -100).all()
