"""Chapter 7 builds BERT on the page: its visible cells marked ``# attention_to_bert/bert.py: Name``
define the same code as the package module (as nbdev's exported cells do). The module is the source:
``python scripts/notebooks/sync_model_cells.py book/07_bert.ipynb`` rewrites the cells from it. Compared: the
syntax tree of each named class, with docstrings compared word by word (the cells re-wrap them to
76 columns) and comments ignored (they are not in the tree)."""

import ast
import sys

import nbformat
import pytest
from helpers import ROOT

sys.path.insert(0, str(ROOT / "scripts" / "notebooks"))
from reading_budget import hidden as folded  # noqa: E402
from sync_model_cells import definitions, marked_cells  # noqa: E402

CHAPTER = ROOT / "book" / "07_bert.ipynb"
SHOWN = {"BertEmbeddings", "BertSelfAttention", "BertOutput", "BertLayer", "BertModel"}
# in view; BertSelfAttention (its fused-kernel branch), BertOutput, BertLayer and BertModel hold
# the same weights under Hugging Face's names: folded
VISIBLE = {"BertEmbeddings"}
# attention, the layer and the model as the formula, in view (the main code of section 7.2)
PLAIN = {"PlainSelfAttention", "PlainBertLayer", "PlainBert"}


def normalised(node: ast.AST) -> str:
    """``ast.dump`` of ``node`` with each docstring's whitespace collapsed."""
    node = ast.parse(ast.unparse(node))  # a copy
    for item in ast.walk(node):
        body = getattr(item, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            value = body[0].value
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                value.value = " ".join(value.value.split())
    return ast.dump(node, include_attributes=False)


def cells():
    notebook = nbformat.read(CHAPTER, as_version=4)
    return [
        (notebook.cells[index], module, names) for index, module, names in marked_cells(notebook)
    ]


def test_the_chapter_shows_bert_from_the_attention_to_the_model():
    shown = [name for _, _, names in cells() for name in names]
    assert SHOWN <= set(shown), f"not shown on the page: {SHOWN - set(shown)}"
    assert len(shown) == len(set(shown)), "a class is shown twice"
    for cell, _, names in cells():  # visible: not folded on the website or in JupyterLab
        if VISIBLE & set(names):
            assert not folded(cell), names
    notebook = nbformat.read(CHAPTER, as_version=4)
    plain = {
        name
        for cell in notebook.cells
        if cell.cell_type == "code" and not folded(cell)
        for name in definitions(cell.source)
    }
    assert PLAIN <= plain, f"not in view: {PLAIN - plain}"


@pytest.mark.parametrize("name", sorted(SHOWN))
def test_cell_and_module_define_the_same_code(name):
    ((cell, module, _),) = [found for found in cells() if name in found[2]]
    in_module = definitions((ROOT / "book" / module).read_text(encoding="utf-8"))
    in_cell = definitions(cell.source)
    assert name in in_cell, f"the cell marked as {module}: {name} does not define it"
    assert normalised(in_cell[name]) == normalised(in_module[name]), (
        f"{name}: the cell differs from {module}; run python scripts/notebooks/sync_model_cells.py"
    )


def test_a_marked_cell_defines_only_what_it_names():
    for cell, module, names in cells():
        assert list(definitions(cell.source)) == names, (module, names)


def test_the_comparison_sees_a_changed_line():
    """The test above would fail on a cell that drifted: one changed operator is a different tree."""
    ((cell, module, _),) = [found for found in cells() if "BertSelfAttention" in found[2]]
    drifted = cell.source.replace("math.sqrt(query.shape[-1])", "query.shape[-1]")
    assert drifted != cell.source
    in_module = definitions((ROOT / "book" / module).read_text(encoding="utf-8"))
    assert normalised(definitions(drifted)["BertSelfAttention"]) != normalised(
        in_module["BertSelfAttention"]
    )
