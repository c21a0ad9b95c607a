"""The masks (masks.py), their one home: no other module of the package re-exports them."""

import importlib
import pkgutil

import pytest
import torch

import attention_to_bert
from attention_to_bert.masks import (
    attends_to_nothing,
    causal_mask,
    combine_masks,
    from_attention_mask,
    masked_softmax,
    padding_mask,
    padding_mask_from_ids,
    weighted_sum,
)

# translator.py (chapter 6) still imports causal_mask by name: `from attention_to_bert import masks`
# and masks.causal_mask there would close this (issue 52, round 7)
PENDING = {("translator", "causal_mask")}


def test_each_mask_has_one_import_path():
    """``masked_softmax``, ``padding_mask`` and ``causal_mask`` (once with three homes; chapter 1's
    attention re-exported two) are found in masks only."""
    names = ("masked_softmax", "padding_mask", "causal_mask")
    found = []
    for info in pkgutil.walk_packages(attention_to_bert.__path__, "attention_to_bert."):
        short = info.name.rsplit(".", 1)[1]
        if short != "masks" and ".checks" not in info.name:
            module = importlib.import_module(info.name)
            found += [(short, n) for n in names if getattr(module, n, None) is not None]
    assert set(found) <= PENDING, found
    assert masked_softmax and padding_mask and causal_mask


def test_causal_mask_is_true_above_the_diagonal():
    mask = causal_mask(4)
    assert mask.dtype == torch.bool and mask.shape == (4, 4)
    for i in range(4):
        for j in range(4):
            assert bool(mask[i, j]) == (j > i)


@pytest.mark.parametrize(
    "size, error", [(0, ValueError), (-2, ValueError), (2.5, TypeError), (True, TypeError)]
)
def test_causal_mask_rejects_bad_sizes(size, error):
    with pytest.raises(error, match="size"):
        causal_mask(size)


def test_padding_mask_from_ids_marks_pad_ids():
    ids = torch.tensor([[5, 6, 0], [7, 0, 0]])
    assert padding_mask_from_ids(ids).tolist() == [[False, False, True], [False, True, True]]
    with pytest.raises(TypeError, match="torch.long"):
        padding_mask_from_ids(ids.float())
    assert padding_mask_from_ids(ids[None], pad_id=5).shape == (1, 2, 3)  # any shape (HAN: 3-D)
    with pytest.raises(ValueError, match="token_ids must have at least 1 dimensions"):
        padding_mask_from_ids(ids[0, 0])
    with pytest.raises(TypeError, match="pad_id must be an int"):
        padding_mask_from_ids(ids, pad_id="0")


def test_padding_mask_from_lengths():
    assert padding_mask([2, 0, 3]).tolist() == [[0, 0, 1], [1, 1, 1], [0, 0, 0]]
    assert padding_mask(torch.tensor([1]), max_length=2).tolist() == [[False, True]]
    assert padding_mask([]).shape == (0, 0) and padding_mask([], max_length=3).shape == (0, 3)
    with pytest.raises(TypeError, match="max_length must be an int, got float"):
        padding_mask([2, 3], max_length=3.5)
    with pytest.raises(ValueError, match="max_length=2 is shorter"):
        padding_mask([2, 3], max_length=2)
    with pytest.raises(ValueError, match="lengths must be >= 0"):
        padding_mask([-1, 2])
    with pytest.raises(ValueError, match="lengths must be a 1-D sequence of integers"):
        padding_mask([1.5, 2.0])


def test_hugging_face_attention_mask_becomes_a_padding_mask():
    ids = torch.tensor([[5, 6, 7], [5, 6, 0]])
    ones = torch.tensor([[1, 1, 1], [1, 1, 0]])
    assert from_attention_mask(ones, ids).tolist() == [[False] * 3, [False, False, True]]
    assert torch.equal(from_attention_mask(ones.float(), ids), from_attention_mask(ones, ids))


@pytest.mark.parametrize(
    "mask, error, message",
    [
        (torch.tensor([[0, 0, 0], [0, 0, 1]]).bool(), TypeError, "got a bool tensor"),
        (torch.tensor([[5, 6, 7], [5, 6, 0]]), ValueError, r"only 0 and 1, got \[0, 5, 6, 7\]"),
        (torch.tensor([[1, 1], [1, 0]]), ValueError, r"shape \(batch, seq\) = \(2, 3\)"),
        ([[1, 1, 1], [1, 1, 0]], TypeError, "must be a torch.Tensor"),
    ],
)
def test_an_ambiguous_attention_mask_is_refused_naming_both_conventions(mask, error, message):
    with pytest.raises(error, match=message) as raised:
        from_attention_mask(mask, torch.ones(2, 3, dtype=torch.long))
    assert str(raised.value).startswith("attention_mask")
    if "bool" in message or "only 0 and 1" in message:
        assert "1 for real tokens" in str(raised.value) and "True for padding" in str(raised.value)


def test_combine_masks_ors_padding_and_attention_masks():
    padding = torch.tensor([[False, False, True]])
    mask = combine_masks(1, 3, 3, 2, key_padding_mask=padding, attn_mask=causal_mask(3))
    assert mask.shape == (1, 1, 3, 3)
    assert mask[0, 0].tolist() == [[0, 1, 1], [0, 0, 1], [0, 0, 1]]
    assert combine_masks(1, 3, 3) is None
    with pytest.raises(ValueError, match="key_padding_mask must be on the inputs' device cpu"):
        combine_masks(1, 3, 3, key_padding_mask=padding.to("meta"), device=torch.device("cpu"))


def test_a_masked_key_never_reaches_the_output_not_even_a_nan():
    weights = masked_softmax(torch.randn(2, 4, 5), padding_mask([3, 5])[:, None, :])
    value = torch.randn(2, 5, 6)
    exact = weighted_sum(weights, value, padding_mask([3, 5])[:, None, :])
    assert torch.equal(exact, weights @ value)  # finite values: the plain product
    value[0, 4] = float("nan")  # a padded key of sequence 0
    value[1, 2, 0] = float("inf")  # a real key of sequence 1: it is attended to
    summed = weighted_sum(weights, value, padding_mask([3, 5])[:, None, :])
    assert torch.isfinite(summed[0]).all()
    torch.testing.assert_close(summed[0], weights[0] @ value[0].nan_to_num(0.0))
    assert summed[1, :, 0].isinf().all() and torch.isfinite(summed[1, :, 1:]).all()


def test_attends_to_nothing_marks_fully_masked_rows():
    mask = torch.tensor([[True, True], [False, True]])
    assert attends_to_nothing(mask).tolist() == [[True], [False]]


def test_masked_softmax_refuses_a_mask_on_another_device():
    with pytest.raises(ValueError, match="mask must be on the inputs' device cpu, got meta"):
        masked_softmax(torch.randn(2, 3), torch.zeros(2, 3, dtype=torch.bool, device="meta"))


def test_a_wrong_attn_mask_with_one_head_gets_the_shapes_in_its_error():
    """With one head, (batch * heads, q, k) is (batch, q, k): the message used to fail in zip()."""
    with pytest.raises(
        ValueError, match=r"attn_mask must have shape \(query_len, key_len\) = \(5, 5\)"
    ):
        combine_masks(2, 5, 5, 1, attn_mask=torch.zeros(3, 3, dtype=torch.bool))


def test_a_row_of_minus_infinity_counts_as_masked():
    weights = masked_softmax(torch.tensor([[float("-inf")] * 3, [0.0, float("-inf"), 0.0]]))
    assert torch.equal(weights, torch.tensor([[0.0, 0.0, 0.0], [0.5, 0.0, 0.5]]))
