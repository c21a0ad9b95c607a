"""Chapter 4: the facts the chapter relies on, checked against torch."""

import math

import pytest
import torch
import torch.nn.functional as F

from attention_to_bert.attention import attention
from attention_to_bert.positional import PositionalEncoding

# --- the chapter's claims, against the reference implementations ---


def self_attention_with_loops(x, w_q, w_k, w_v):
    """The chapter's first version: one query at a time, one key at a time."""
    query, key, value = x @ w_q, x @ w_k, x @ w_v
    n, d_k = x.shape[0], w_q.shape[1]
    output = torch.zeros(n, w_v.shape[1], dtype=x.dtype)
    for i in range(n):
        scores = torch.stack([query[i] @ key[j] / math.sqrt(d_k) for j in range(n)])
        weights = torch.exp(scores - scores.max()) / torch.exp(scores - scores.max()).sum()
        output[i] = sum(weights[j] * value[j] for j in range(n))
    return output


def test_self_attention_by_loops_equals_package_and_torch():
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(6, 8, generator=generator)
    w_q, w_k, w_v = (torch.randn(8, 4, generator=generator) for _ in range(3))
    ours = self_attention_with_loops(x, w_q, w_k, w_v)
    package, weights = attention(x @ w_q, x @ w_k, x @ w_v)
    reference = F.scaled_dot_product_attention(x @ w_q, x @ w_k, x @ w_v)
    assert torch.allclose(ours, package, atol=1e-5) and torch.allclose(
        package, reference, atol=1e-5
    )
    assert weights.shape == (6, 6) and torch.allclose(weights.sum(-1), torch.ones(6))


def test_self_attention_without_positions_is_permutation_equivariant():
    generator = torch.Generator().manual_seed(1)
    x = torch.randn(2, 7, 16, generator=generator, dtype=torch.float64)
    w_q, w_k, w_v = (
        torch.randn(16, 16, generator=generator, dtype=torch.float64) for _ in range(3)
    )
    permutation = torch.randperm(7, generator=generator)

    def self_attention(inputs):
        return attention(inputs @ w_q, inputs @ w_k, inputs @ w_v)[0]

    assert torch.allclose(
        self_attention(x[:, permutation]), self_attention(x)[:, permutation], atol=1e-10
    )
    encode = PositionalEncoding(16, max_len=7).double()
    shuffled_then_encoded = self_attention(encode(x[:, permutation]))
    encoded_then_shuffled = self_attention(encode(x))[:, permutation]
    assert (shuffled_then_encoded - encoded_then_shuffled).abs().max() > 0.1


def test_sinusoidal_formula_equals_positional_encoding_table():
    max_len, d_model = 512, 64
    position = torch.arange(max_len, dtype=torch.float64)[:, None]
    angle = position / 10000 ** (torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    table = torch.stack([torch.sin(angle), torch.cos(angle)], dim=-1).reshape(max_len, d_model)
    # float32 angles up to 511 rad carry rounding errors of a few 1e-5
    assert torch.allclose(PositionalEncoding(d_model, max_len).pe.double(), table, atol=1e-4)


def test_variance_of_dot_product_grows_like_d_k():
    generator = torch.Generator().manual_seed(2)
    for d_k in (4, 64, 512):
        q = torch.randn(20000, d_k, generator=generator)
        k = torch.randn(20000, d_k, generator=generator)
        dots = (q * k).sum(-1)
        assert dots.var().item() == pytest.approx(d_k, rel=0.05)
        assert (dots / math.sqrt(d_k)).var().item() == pytest.approx(1.0, rel=0.05)
