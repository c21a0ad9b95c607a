"""Our encoder and decoder layers and Transformer (transformer.py) against their torch.nn twins.

Tolerances: float32, eval mode (or dropout=0); outputs and per-head weights must agree to atol 1e-5
(rtol 1e-4). Measured differences are ~1e-7 (attention) to ~1e-6 (a 2+2-layer Transformer).
"""

import pytest
import torch
from helpers import assert_close, random_padding, record_torch_weights
from torch import nn

from attention_to_bert.masks import causal_mask, combine_masks
from attention_to_bert.multihead import MultiHeadAttention
from attention_to_bert.transformer import DecoderLayer, EncoderLayer, Transformer


def test_from_torch_refuses_what_it_cannot_copy():
    with pytest.raises(TypeError, match="m must be an nn.MultiheadAttention, got Linear"):
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
        # our layer takes the stack's one combined mask (True = may not attend)
        mask = combine_masks(
            batch, length, length, key_padding_mask=padding, attn_mask=masks.get("src_mask")
        )
        output, weights = ours(x, mask if masks else None)
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
    self_mask = combine_masks(
        batch, tgt_len, tgt_len, key_padding_mask=tgt_padding, attn_mask=causal_mask(tgt_len)
    )
    memory_mask = combine_masks(batch, tgt_len, src_len, key_padding_mask=memory_padding)
    output, self_weights, cross_weights = ours(x, memory, self_mask, memory_mask)
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


def test_the_stack_takes_torchs_masks_by_keyword_and_a_layer_one_combined_mask():
    torch.manual_seed(0)
    layer = EncoderLayer(8, 2, 16).eval()
    x, padding = torch.randn(2, 3, 8), torch.tensor([[False, False, True]] * 2)
    with pytest.raises(TypeError, match="positional"):
        Transformer(8, 2, 1, 1, 16)(x, x, causal_mask(3))  # which of torch's six masks?
    mask = combine_masks(2, 3, 3, key_padding_mask=padding, attn_mask=causal_mask(3))
    assert mask.shape == (2, 1, 3, 3)  # (batch, heads, queries, keys), broadcast over heads
    _, weights = layer(x, mask)
    assert (weights[..., 2] == 0).all() and (weights.triu(1) == 0).all()


def test_layers_spell_out_their_sublayers_in_torchs_order():
    encoder, decoder = EncoderLayer(8, 2, 16), DecoderLayer(8, 2, 16)
    assert [name for name, _ in encoder.named_children()] == [
        *("self_attn", "linear1", "dropout", "linear2"),
        *("norm1", "dropout1", "norm2", "dropout2"),
    ]
    names = [name for name, _ in decoder.named_children()]
    assert names[:2] == ["self_attn", "multihead_attn"] and names[-2:] == ["norm3", "dropout3"]
    assert [n for n, _ in nn.TransformerDecoderLayer(8, 2, 16).named_children()][:2] == names[:2]


def test_the_output_reads_by_attribute_key_index_and_unpacking():
    torch.manual_seed(0)
    model = Transformer(8, 2, 1, 2, 16, dropout=0.0).eval()
    out = model(torch.randn(2, 3, 8), torch.randn(2, 4, 8), tgt_mask=causal_mask(4))
    output, attentions = out
    assert output is out.last_hidden_state is out[0] is out["last_hidden_state"]
    assert attentions["cross"] is out.cross_attentions and len(out.decoder_attentions) == 2
    assert out["attentions"]["encoder"] is out.encoder_attentions and len(out) == 2
    with pytest.raises(KeyError, match="logits"):
        out["logits"]


@pytest.mark.parametrize(
    "arguments, name",
    [
        ({"num_encoder_layers": -1}, "num_encoder_layers"),
        ({"num_decoder_layers": 1.0}, "num_decoder_layers"),
        ({"d_ff": 0}, "d_ff"),
        ({"layer_norm_eps": -1.0}, "layer_norm_eps"),
        ({"dropout": 2.0}, "dropout"),
        ({"d_model": 8.0}, "d_model"),
    ],
)
def test_bad_sizes_are_refused_by_name(arguments, name):
    with pytest.raises((TypeError, ValueError), match=f"^{name} must"):
        Transformer(**{"d_model": 8, "num_heads": 2, "d_ff": 16} | arguments)
