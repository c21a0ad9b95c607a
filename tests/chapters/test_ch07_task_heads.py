"""Exercise 7.5's solution, the task heads of section 7.7: two folded code cells (the modules with
their checker call, then the span head on MiniLM). Here they run as written on MiniLM: the checker
passes, the best span lies inside the passage with start <= end, the printed loss is about ln of the
passage's length (an untrained head), and each head returns what the exercise asks (output shapes;
the span head scores -1e4 exactly outside the passage) on MiniLM itself."""

import contextlib
import io
import math
import re

import nbformat
import pytest
import torch
import torch.nn.functional as F
from helpers import ROOT
from torch import nn

from attention_to_bert import checks
from attention_to_bert.bert import load_minilm

CHAPTER = ROOT / "book" / "07_bert.ipynb"


def solution_code() -> str:
    """The code cells of the solution that follows the heading 'Exercise 7.5', joined."""
    cells = nbformat.read(CHAPTER, as_version=4).cells
    start = next(i for i, c in enumerate(cells) if "### Exercise 7.5" in c.source)
    after = cells[start + 1 :]
    end = next(i for i, c in enumerate(after) if c.cell_type == "markdown")
    solution = after[:end]
    assert solution and all("solution" in c.metadata.get("tags", []) for c in solution)
    return "\n\n".join(c.source for c in solution)


@pytest.fixture(scope="module")
def solved():
    """The names the solution defines and what it printed, run on MiniLM as in the chapter."""
    model, tokenizer = load_minilm()
    names = {"torch": torch, "nn": nn, "F": F, "math": math, "checks": checks}
    names |= {"model": model, "tokenizer": tokenizer}
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(solution_code(), names)  # raises if one of its asserts fails
    return names, printed.getvalue()


@pytest.mark.recomputes
def test_the_checker_passes_and_the_loss_is_about_a_uniform_guess(solved):
    _, printed = solved
    assert "✔ task_heads: passes all" in printed, printed
    assert "best span inside the passage, start <= end: True" in printed, printed
    got = re.search(r"span loss (\d\.\d+) vs ln (\d+) = (\d\.\d+)", printed)
    assert got, printed
    loss, positions, uniform = float(got[1]), int(got[2]), float(got[3])
    assert positions == 9  # "The fox slept under the old oak tree ."
    assert uniform == pytest.approx(math.log(9), abs=0.01)
    assert abs(loss - math.log(9)) < 0.1  # the solution's words: close to ln(passage positions)


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
