"""Our Transformer pieces against their torch.nn twins, masks, and clear errors on bad input.

Tolerances: float32, eval mode (or dropout=0); outputs and per-head weights must agree to atol 1e-5
(rtol 1e-4). Measured differences are ~1e-7 (attention) to ~1e-6 (a 2+2-layer Transformer).
"""

import math

import pytest
import torch
from torch import nn

from attention_to_bert.multihead import (
    MultiHeadAttention,
    causal_mask,
    merge_heads,
    padding_mask_from_ids,
    split_heads,
)
from attention_to_bert.positional import PositionalEncoding
from attention_to_bert.transformer import (
    DecoderLayer,
    EncoderLayer,
    Transformer,
)

ATOL, RTOL = 1e-5, 1e-4


def assert_close(actual, expected):
    torch.testing.assert_close(actual, expected, atol=ATOL, rtol=RTOL)


def random_padding(batch: int, length: int, generator: torch.Generator) -> torch.Tensor:
    """A key_padding_mask whose rows each keep at least one key."""
    lengths = torch.randint(1, length + 1, (batch,), generator=generator)
    return torch.arange(length)[None, :] >= lengths[:, None]


def record_torch_weights(module: nn.Module) -> list[torch.Tensor]:
    """Make every nn.MultiheadAttention inside ``module`` return per-head weights and record them in order."""
    recorded: list[torch.Tensor] = []

    def ask_for_weights(_module, args, kwargs):
        kwargs["need_weights"] = True
        kwargs["average_attn_weights"] = False
        return args, kwargs

    def keep(_module, _args, output):
        recorded.append(output[1])

    for sub in module.modules():
        if isinstance(sub, nn.MultiheadAttention):
            sub.register_forward_pre_hook(ask_for_weights, with_kwargs=True)
            sub.register_forward_hook(keep)
    return recorded


# --- masks and head reshaping ---


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
    with pytest.raises(ValueError, match=r"\(batch, seq\)"):
        padding_mask_from_ids(ids[0])


def test_split_heads_gives_each_head_its_slice_and_merge_inverts_it():
    x = torch.randn(2, 5, 12)
    heads = split_heads(x, 3)
    assert heads.shape == (2, 3, 5, 4)
    for h in range(3):
        assert torch.equal(heads[:, h], x[..., 4 * h : 4 * (h + 1)])
    assert torch.equal(merge_heads(heads), x)
    with pytest.raises(ValueError, match="not divisible"):
        split_heads(x, 5)


# --- positional encodings ---


def test_sinusoidal_positional_encoding_follows_the_formula():
    d_model, max_len = 6, 20
    encoding = PositionalEncoding(d_model, max_len=max_len)
    assert encoding.pe.shape == (max_len, d_model)
    for pos in range(max_len):
        for i in range(d_model // 2):
            angle = pos / 10000 ** (2 * i / d_model)
            assert math.isclose(encoding.pe[pos, 2 * i].item(), math.sin(angle), abs_tol=1e-5)
            assert math.isclose(encoding.pe[pos, 2 * i + 1].item(), math.cos(angle), abs_tol=1e-5)
    x = torch.randn(3, 7, d_model)
    assert torch.equal(encoding(x), x + encoding.pe[:7])
    assert "pe" not in encoding.state_dict()  # computed, not learned


def test_positional_encoding_handles_odd_widths():
    encoding = PositionalEncoding(5, max_len=8)
    assert encoding(torch.zeros(1, 8, 5)).shape == (1, 8, 5)
    assert torch.allclose(encoding.pe[3, 4], torch.tensor(math.sin(3 / 10000 ** (4 / 5))))


def test_positional_encoding_rejects_bad_inputs():
    encoding = PositionalEncoding(8, max_len=10)
    assert encoding(torch.zeros(2, 10, 8)).shape == (2, 10, 8)
    with pytest.raises(ValueError, match="exceeds max_len=10"):
        encoding(torch.zeros(2, 11, 8))
    with pytest.raises(ValueError, match=r"d_model=8\), got \(2, 5, 7\)"):
        encoding(torch.zeros(2, 5, 7))
    with pytest.raises(ValueError, match="shape"):
        encoding(torch.zeros(5, 8))


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
        ((2, 3, 8), (3, 4, 8), (3, 4, 8), "same batch size, got 2, 3, 3"),
        ((2, 3, 8), (2, 4, 8), (2, 5, 8), "same length, got 4 and 5"),
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


def test_from_torch_refuses_what_it_cannot_copy():
    with pytest.raises(TypeError, match="expected an nn.MultiheadAttention, got Linear"):
        MultiHeadAttention.from_torch(nn.Linear(4, 4))
    with pytest.raises(ValueError, match="kdim/vdim"):
        MultiHeadAttention.from_torch(nn.MultiheadAttention(8, 2, kdim=4, vdim=4, batch_first=True))
    with pytest.raises(ValueError, match="add_bias_kv"):
        MultiHeadAttention.from_torch(nn.MultiheadAttention(8, 2, add_bias_kv=True))
    with pytest.raises(ValueError, match="post-LN"):
        EncoderLayer.from_torch(
            nn.TransformerEncoderLayer(8, 2, 16, batch_first=True, norm_first=True)
        )
    with pytest.raises(ValueError, match="ReLU"):
        DecoderLayer.from_torch(
            nn.TransformerDecoderLayer(8, 2, 16, batch_first=True, activation="gelu")
        )
    with pytest.raises(TypeError, match="nn.Transformer"):
        Transformer.from_torch(nn.TransformerEncoderLayer(8, 2, 16, batch_first=True))


# --- layers and the whole Transformer vs torch.nn ---


@pytest.mark.parametrize(
    "batch, length, d_model, heads, d_ff", [(1, 1, 4, 1, 8), (3, 6, 16, 4, 32), (2, 9, 24, 3, 40)]
)
def test_encoder_layer_equals_torch(batch, length, d_model, heads, d_ff):
    torch.manual_seed(batch + length)
    reference = nn.TransformerEncoderLayer(
        d_model, heads, d_ff, dropout=0.1, batch_first=True
    ).eval()
    ours = EncoderLayer.from_torch(reference).eval()
    recorded = record_torch_weights(reference)
    x = torch.randn(batch, length, d_model)
    padding = random_padding(batch, length, torch.Generator().manual_seed(0))
    both = {"src_key_padding_mask": padding, "src_mask": causal_mask(length)}
    for masks in ({}, {"src_key_padding_mask": padding}, both):
        recorded.clear()
        expected = reference(x, **masks)
        output, weights = ours(
            x, key_padding_mask=masks.get("src_key_padding_mask"), attn_mask=masks.get("src_mask")
        )
        assert_close(output, expected)
        assert_close(weights, recorded[0])


@pytest.mark.parametrize(
    "batch, tgt_len, src_len, d_model, heads", [(1, 1, 1, 4, 2), (2, 5, 7, 16, 4), (3, 8, 4, 24, 6)]
)
def test_decoder_layer_equals_torch(batch, tgt_len, src_len, d_model, heads):
    torch.manual_seed(tgt_len + src_len)
    reference = nn.TransformerDecoderLayer(
        d_model, heads, 2 * d_model, dropout=0.1, batch_first=True
    ).eval()
    ours = DecoderLayer.from_torch(reference).eval()
    recorded = record_torch_weights(reference)
    generator = torch.Generator().manual_seed(0)
    x, memory = torch.randn(batch, tgt_len, d_model), torch.randn(batch, src_len, d_model)
    tgt_padding, memory_padding = (
        random_padding(batch, tgt_len, generator),
        random_padding(batch, src_len, generator),
    )
    tgt_padding[:, 0] = False  # with the causal mask, query 0 sees only key 0
    expected = reference(
        x,
        memory,
        tgt_mask=causal_mask(tgt_len),
        tgt_key_padding_mask=tgt_padding,
        memory_key_padding_mask=memory_padding,
    )
    output, self_weights, cross_weights = ours(
        x,
        memory,
        tgt_mask=causal_mask(tgt_len),
        tgt_key_padding_mask=tgt_padding,
        memory_key_padding_mask=memory_padding,
    )
    assert_close(output, expected)
    assert self_weights.shape == (batch, heads, tgt_len, tgt_len)
    assert cross_weights.shape == (batch, heads, tgt_len, src_len)
    assert_close(self_weights, recorded[0])
    assert_close(cross_weights, recorded[1])


@pytest.mark.parametrize("layers, mode", [((2, 2), "eval"), ((1, 3), "train")])
def test_transformer_equals_torch(layers, mode):
    torch.manual_seed(sum(layers))
    dropout = 0.1 if mode == "eval" else 0.0  # in train mode only dropout=0 is deterministic
    reference = nn.Transformer(
        32, 4, *layers, dim_feedforward=64, dropout=dropout, batch_first=True
    )
    reference.train(mode == "train")
    ours = Transformer.from_torch(reference)
    assert ours.training == (mode == "train")
    assert sum(p.numel() for p in ours.parameters()) == sum(
        p.numel() for p in reference.parameters()
    )
    recorded = record_torch_weights(reference)
    generator = torch.Generator().manual_seed(0)
    src, tgt = (
        torch.randn(3, 7, 32, generator=generator),
        torch.randn(3, 5, 32, generator=generator),
    )
    src_padding = random_padding(3, 7, generator)
    masks = {
        "tgt_mask": causal_mask(5),
        "src_key_padding_mask": src_padding,
        "memory_key_padding_mask": src_padding,
    }
    expected = reference(src, tgt, **masks)
    output, weights = ours(src, tgt, **masks)
    assert_close(output, expected)
    encoder_layers, decoder_layers = layers
    counts = [len(weights[k]) for k in ("encoder", "decoder", "cross")]
    assert counts == [encoder_layers, decoder_layers, decoder_layers]
    torch_encoder = recorded[:encoder_layers]
    torch_decoder = recorded[encoder_layers::2]
    torch_cross = recorded[encoder_layers + 1 :: 2]
    for ours_list, torch_list in (
        (weights["encoder"], torch_encoder),
        (weights["decoder"], torch_decoder),
        (weights["cross"], torch_cross),
    ):
        for mine, theirs in zip(ours_list, torch_list, strict=True):
            assert_close(mine, theirs)


def test_transformer_encode_then_decode_is_forward():
    torch.manual_seed(0)
    model = Transformer(16, 2, 1, 1, 32, dropout=0.0).eval()
    src, tgt = torch.randn(2, 4, 16), torch.randn(2, 3, 16)
    memory, _ = model.encode(src)
    output, _, cross = model.decode(tgt, memory, tgt_mask=causal_mask(3))
    assert torch.equal(output, model(src, tgt, tgt_mask=causal_mask(3))[0])
    assert cross[0].shape == (2, 2, 3, 4)


def test_from_torch_keeps_the_dtype():
    reference = nn.Transformer(8, 2, 1, 1, 16, dropout=0.0, batch_first=True).double().eval()
    ours = Transformer.from_torch(reference).eval()
    assert all(p.dtype == torch.float64 for p in ours.parameters())
    src, tgt = torch.randn(2, 3, 8, dtype=torch.float64), torch.randn(2, 4, 8, dtype=torch.float64)
    torch.testing.assert_close(
        ours(src, tgt, tgt_mask=causal_mask(4))[0],
        reference(src, tgt, tgt_mask=causal_mask(4)),
        atol=1e-12,
        rtol=1e-10,
    )
