"""Chapter 6 writes its layers and its model on the page: its visible cells marked
``# attention_to_bert/transformer.py: Name`` (the layers) and ``# attention_to_bert/translator.py:
Seq2SeqTransformer`` (the model: embeddings, masks, generator) define the same code as the package
module (the module is the source:
``python scripts/notebooks/sync_model_cells.py book/06_transformer.ipynb`` rewrites the cells from
it). Compared as in ``test_ch07_model_on_page.py``: the syntax tree of each named class,
docstrings word by word, comments ignored. The one reference check the lesson keeps in its path
(ours = ``nn.TransformerEncoderLayer`` with the same weights) runs here too, on the cell's code."""

import sys

import nbformat
import pytest
import torch
from helpers import ROOT
from test_ch07_model_on_page import normalised
from torch import nn

sys.path.insert(0, str(ROOT / "scripts" / "notebooks"))
from sync_model_cells import definitions, marked_cells  # noqa: E402

CHAPTER = ROOT / "book" / "06_transformer.ipynb"
SHOWN = {"EncoderLayer", "DecoderLayer", "Seq2SeqTransformer"}
MODULES = {"attention_to_bert/transformer.py", "attention_to_bert/translator.py"}


def cells():
    notebook = nbformat.read(CHAPTER, as_version=4)
    return [
        (notebook.cells[index], module, names) for index, module, names in marked_cells(notebook)
    ]


def test_the_chapter_shows_its_layers_in_visible_cells():
    shown = [name for _, _, names in cells() for name in names]
    assert SHOWN <= set(shown), f"not shown on the page: {SHOWN - set(shown)}"
    assert len(shown) == len(set(shown)), "a class is shown twice"
    for cell, module, names in cells():
        assert module in MODULES, module
        assert list(definitions(cell.source)) == names, (module, names)
        assert not {"hide-cell", "hide-input", "remove-cell"} & set(cell.metadata.get("tags", []))
        assert not cell.metadata.get("jupyter", {}).get("source_hidden")
        assert all(len(line) <= 76 for line in cell.source.splitlines()), "wider than the page"


@pytest.mark.parametrize("name", sorted(SHOWN))
def test_cell_and_module_define_the_same_code(name):
    ((cell, module, _),) = [found for found in cells() if name in found[2]]
    in_module = definitions((ROOT / "book" / module).read_text(encoding="utf-8"))
    in_cell = definitions(cell.source)
    assert normalised(in_cell[name]) == normalised(in_module[name]), (
        f"{name}: the cell differs from {module}; run python scripts/notebooks/sync_model_cells.py"
    )


def test_the_comparison_sees_a_changed_line():
    ((cell, module, _),) = [found for found in cells() if "EncoderLayer" in found[2]]
    drifted = cell.source.replace("x + self.dropout1(attended)", "self.dropout1(attended)")
    assert drifted != cell.source
    in_module = definitions((ROOT / "book" / module).read_text(encoding="utf-8"))
    assert normalised(definitions(drifted)["EncoderLayer"]) != normalised(in_module["EncoderLayer"])


def test_the_cells_layer_equals_torchs_with_the_same_weights():
    """The page's own EncoderLayer (the cell run as written) against nn.TransformerEncoderLayer."""
    from attention_to_bert.multihead import MultiHeadAttention
    from attention_to_bert.transformer import copy_layer_weights
    from attention_to_bert.validate import check_int, check_number

    ((cell, _, _),) = [found for found in cells() if "EncoderLayer" in found[2]]
    namespace = {
        "nn": nn, "F": torch.nn.functional, "Tensor": torch.Tensor, "Mask": torch.Tensor | None,
        "MultiHeadAttention": MultiHeadAttention, "check_int": check_int,
        "copy_layer_weights": copy_layer_weights,
        "check_number": check_number,
    }  # fmt: skip
    exec(compile(cell.source, "cell", "exec"), namespace)
    torch.manual_seed(0)
    twin = nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0, batch_first=True).eval()
    ours = namespace["EncoderLayer"].from_torch(twin).eval()
    x = torch.randn(2, 5, 16)
    padding = torch.tensor([[False] * 5, [False] * 3 + [True] * 2])
    with torch.no_grad():
        y, _ = ours(x, padding[:, None, None, :])
    reference = twin(x, src_key_padding_mask=padding).detach()
    assert torch.allclose(y[~padding], reference[~padding], atol=1e-5)


def test_the_cells_model_equals_the_packages_with_the_same_weights():
    """The page's own Seq2SeqTransformer (the cell run as written, with the lesson's imports) gives
    the package's logits and attention weights on a padded batch, and its masks hide the padding."""
    import math

    from attention_to_bert import translator
    from attention_to_bert.masks import causal_mask
    from attention_to_bert.outputs import Seq2SeqTransformerOutput
    from attention_to_bert.positional import PositionalEncoding
    from attention_to_bert.transformer import Transformer

    ((cell, _, _),) = [found for found in cells() if "Seq2SeqTransformer" in found[2]]
    namespace = {
        "math": math, "nn": nn, "torch": torch, "Tensor": torch.Tensor, "Mask": torch.Tensor | None,
        "causal_mask": causal_mask, "PositionalEncoding": PositionalEncoding,
        "Transformer": Transformer, "Seq2SeqTransformerOutput": Seq2SeqTransformerOutput,
        "PAD_ID": translator.PAD_ID, "BOS_ID": translator.BOS_ID, "EOS_ID": translator.EOS_ID,
        "_check_inputs": translator._check_inputs, "check_sizes": translator.check_sizes,
    }  # fmt: skip
    exec(compile(cell.source, "cell", "exec"), namespace)
    sizes = {"d_model": 16, "num_heads": 2, "num_layers": 2, "d_ff": 32, "dropout": 0.0}
    torch.manual_seed(0)
    ours = namespace["Seq2SeqTransformer"](13, 11, **sizes).eval()
    torch.manual_seed(0)
    package = translator.Seq2SeqTransformer(13, 11, **sizes).eval()
    pad = ours.pad_id
    src = torch.tensor([[5, 6, 7, 8], [9, 10, pad, pad]])
    tgt = torch.tensor([[ours.bos_id, 4, 5], [ours.bos_id, 6, pad]])
    with torch.no_grad():
        logits, attention = ours(src, tgt)
        reference, reference_attention = package(src, tgt)
    assert torch.equal(logits, reference)
    assert torch.equal(attention["cross"][-1], reference_attention["cross"][-1])
    # no query reads a padded source position, nor a later or padded target position
    assert attention["cross"][0][1, :, :, 2:].abs().max() == 0
    assert attention["encoder"][0][1, :, :, 2:].abs().max() == 0
    decoder = attention["decoder"][0]
    assert decoder.triu(diagonal=1).abs().max() == 0
    assert decoder[1, :, :, 2].abs().max() == 0
