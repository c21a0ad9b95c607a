"""Multi-head attention (multihead.py) against nn.MultiheadAttention, the head reshaping, and clear
errors on bad input. Tolerances: float32, eval mode (or dropout=0), atol 1e-5 (rtol 1e-4); measured
differences are ~1e-7."""

import pytest
import torch
from helpers import assert_close, random_padding
from torch import nn

from attention_to_bert.masks import causal_mask
from attention_to_bert.multihead import MultiHeadAttention, merge_heads, split_heads


def test_split_heads_gives_each_head_its_slice_and_merge_inverts_it():
    x = torch.randn(2, 5, 12)
    heads = split_heads(x, 3)
    assert heads.shape == (2, 3, 5, 4)
    for h in range(3):
        assert torch.equal(heads[:, h], x[..., 4 * h : 4 * (h + 1)])
    assert torch.equal(merge_heads(heads), x)
    with pytest.raises(
        ValueError, match="d_model=12 must be divisible by num_heads=5.*try num_heads in"
    ):
        split_heads(x, 5)


# --- multi-head attention vs nn.MultiheadAttention ---

SHAPES = [  # batch, query_len, key_len, d_model, heads
    (1, 1, 1, 4, 1),
    (2, 5, 5, 16, 4),
    (3, 4, 7, 12, 3),
    (4, 9, 6, 64, 8),
]


def pair(d_model, heads, seed, bias=True):
    torch.manual_seed(seed)
    reference = nn.MultiheadAttention(d_model, heads, batch_first=True, bias=bias).eval()
    with torch.no_grad():  # torch initialises biases to zero: make them matter
        if bias:
            reference.in_proj_bias.normal_()
            reference.out_proj.bias.normal_()
    return reference, MultiHeadAttention.from_torch(reference).eval()


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("batch, query_len, key_len, d_model, heads", SHAPES)
def test_multi_head_attention_equals_torch(batch, query_len, key_len, d_model, heads, bias):
    reference, ours = pair(d_model, heads, seed=batch * 10 + heads, bias=bias)
    generator = torch.Generator().manual_seed(1)
    query = torch.randn(batch, query_len, d_model, generator=generator)
    key = torch.randn(batch, key_len, d_model, generator=generator)
    value = torch.randn(batch, key_len, d_model, generator=generator)
    padding = random_padding(batch, key_len, generator)
    attn_mask = torch.rand(query_len, key_len, generator=generator) < 0.3
    attn_mask[:, 0] = False  # together with a kept first key no row is fully masked
    padding[:, 0] = False
    for masks in (
        {},
        {"key_padding_mask": padding},
        {"attn_mask": attn_mask},
        {"key_padding_mask": padding, "attn_mask": attn_mask},
    ):
        expected, expected_weights = reference(
            query, key, value, average_attn_weights=False, **masks
        )
        output, weights = ours(query, key, value, **masks)
        assert weights.shape == (batch, heads, query_len, key_len)
        assert_close(output, expected)
        assert_close(weights, expected_weights)


def test_multi_head_self_attention_with_causal_mask_equals_torch():
    reference, ours = pair(32, 4, seed=3)
    x = torch.randn(3, 6, 32)
    mask = causal_mask(6)
    expected, expected_weights = reference(x, x, x, attn_mask=mask, average_attn_weights=False)
    output, weights = ours(x, x, x, attn_mask=mask)
    assert_close(output, expected)
    assert_close(weights, expected_weights)
    assert torch.all(weights.masked_select(mask) == 0)
    assert torch.allclose(weights.sum(-1), torch.ones(3, 4, 6))


def test_every_attn_mask_layout_means_the_same():
    batch, heads, query_len, key_len, d_model = 2, 4, 3, 5, 8
    reference, ours = pair(d_model, heads, seed=4)
    query, key = torch.randn(batch, query_len, d_model), torch.randn(batch, key_len, d_model)
    per_head = torch.rand(batch, heads, query_len, key_len) < 0.4
    per_head[..., 2] = False
    torch_layout = per_head.reshape(
        batch * heads, query_len, key_len
    )  # torch's (batch * heads, L, S)
    expected, expected_weights = reference(
        query, key, key, attn_mask=torch_layout, average_attn_weights=False
    )
    for mask in (per_head, torch_layout):
        output, weights = ours(query, key, key, attn_mask=mask)
        assert_close(output, expected)
        assert_close(weights, expected_weights)
    per_example = per_head[:, 0]  # (batch, L, S): the same for every head
    output, _ = ours(query, key, key, attn_mask=per_example)
    expected, _ = reference(query, key, key, attn_mask=per_example.repeat_interleave(heads, dim=0))
    assert_close(output, expected)


def test_fully_masked_query_row_gives_zeros_where_torch_gives_nan():
    reference, ours = pair(8, 2, seed=5)
    query, key = torch.randn(2, 3, 8, requires_grad=True), torch.randn(2, 4, 8)
    attn_mask = torch.zeros(3, 4, dtype=torch.bool)
    attn_mask[1] = True  # query 1 may attend to nothing
    padding = torch.tensor(
        [[False, False, True, True], [True, True, True, True]]
    )  # example 1: all keys padding
    expected, _ = reference(query, key, key, attn_mask=attn_mask, key_padding_mask=padding)
    assert torch.isnan(expected[:, 1]).all() and torch.isnan(expected[1]).all()
    output, weights = ours(query, key, key, attn_mask=attn_mask, key_padding_mask=padding)
    assert not torch.isnan(output).any() and not torch.isnan(weights).any()
    assert torch.all(weights[:, :, 1] == 0) and torch.all(weights[1] == 0)
    assert torch.all(output[:, 1] == 0) and torch.all(output[1] == 0)
    assert_close(output[0, [0, 2]], expected[0, [0, 2]])  # the other rows still equal torch's
    output.sum().backward()
    assert torch.isfinite(query.grad).all()


def test_fused_self_attention_projection_equals_three_separate_projections():
    """Self-attention (query is key is value) takes one stacked q/k/v product; it must change nothing."""
    _, ours = pair(16, 4, seed=7)
    x = torch.randn(3, 5, 16, requires_grad=True)
    copies = [
        x.detach().clone().requires_grad_() for _ in range(3)
    ]  # three tensors: the three-product path
    fused, fused_weights = ours(x, x, x)
    separate, separate_weights = ours(*copies)
    torch.testing.assert_close(fused, separate, rtol=0, atol=1e-6)
    torch.testing.assert_close(fused_weights, separate_weights, rtol=0, atol=1e-6)
    fused.square().sum().backward()
    fused_grads = [p.grad.clone() for p in ours.parameters()]
    ours.zero_grad()
    separate.square().sum().backward()
    for fused_grad, p in zip(fused_grads, ours.parameters(), strict=True):
        torch.testing.assert_close(fused_grad, p.grad, rtol=0, atol=1e-5)
    torch.testing.assert_close(x.grad, sum(copy.grad for copy in copies), rtol=0, atol=1e-5)


def test_returned_weights_are_the_ones_used_after_dropout():
    torch.manual_seed(7)
    ours = MultiHeadAttention(8, 2, dropout=0.5).train()
    x = torch.randn(2, 6, 8)
    output, weights = ours(x, x, x)
    assert (weights == 0).any()  # some weights were dropped, the kept ones scaled by 1 / (1 - p)
    values = split_heads(ours.v_proj(x), 2)
    assert_close(output, ours.out_proj(merge_heads(weights @ values)))
    ours.eval()
    assert torch.allclose(ours(x, x, x)[1].sum(-1), torch.ones(2, 2, 6))


# --- bad inputs ---


def test_heads_must_divide_d_model():
    with pytest.raises(ValueError, match="d_model=10 must be divisible by num_heads=4"):
        MultiHeadAttention(10, 4)
    with pytest.raises(ValueError, match="num_heads"):
        MultiHeadAttention(8, 0)


@pytest.mark.parametrize(
    "query_shape, key_shape, value_shape, message",
    [
        ((2, 3, 7), (2, 4, 8), (2, 4, 8), "query's last dimension must be d_model=8, got 7"),
        ((2, 3, 8), (2, 4, 6), (2, 4, 8), "key's last dimension must be d_model=8, got 6"),
        (
            (3, 8),
            (2, 4, 8),
            (2, 4, 8),
            r"query must have shape \(batch, seq, d_model=8\), got \(3, 8\)",
        ),
        ((2, 3, 8), (3, 4, 8), (3, 4, 8), "same batch size, got query 2, key 3, value 3"),
        ((2, 3, 8), (2, 4, 8), (2, 5, 8), "same length, got key 4, value 5"),
    ],
)
def test_bad_input_shapes_are_named(query_shape, key_shape, value_shape, message):
    attention = MultiHeadAttention(8, 2)
    with pytest.raises(ValueError, match=message):
        attention(torch.randn(query_shape), torch.randn(key_shape), torch.randn(value_shape))


def test_integer_inputs_are_refused():
    attention = MultiHeadAttention(8, 2)
    ids = torch.zeros(2, 3, 8, dtype=torch.long)
    with pytest.raises(TypeError, match="floating-point tensor, got torch.int64"):
        attention(ids, ids, ids)


def test_bad_masks_are_named():
    attention = MultiHeadAttention(8, 2)
    query, key = torch.randn(2, 3, 8), torch.randn(2, 4, 8)
    expected = r"key_padding_mask must have shape \(batch, key_len\) = \(2, 4\), got \(2, 3\)"
    with pytest.raises(ValueError, match=expected):
        attention(query, key, key, key_padding_mask=torch.zeros(2, 3, dtype=torch.bool))
    with pytest.raises(
        ValueError,
        match=r"attn_mask must have shape \(query_len, key_len\) = \(3, 4\).*got \(4, 3\)",
    ):
        attention(query, key, key, attn_mask=torch.zeros(4, 3, dtype=torch.bool))
    with pytest.raises(TypeError, match="attn_mask must be a bool tensor.*got dtype torch.float32"):
        attention(query, key, key, attn_mask=torch.zeros(3, 4))
    with pytest.raises(
        TypeError, match="key_padding_mask must be a bool tensor.*got dtype torch.int64"
    ):
        attention(query, key, key, key_padding_mask=torch.zeros(2, 4, dtype=torch.long))
