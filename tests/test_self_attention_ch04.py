"""Chapter 4: the partner-finding data set, and the facts the chapter relies on, checked against torch."""

import math

import pytest
import torch
import torch.nn.functional as F

from attention_to_bert.attention import attention
from attention_to_bert.data import PARTNER_SYMBOLS, partner_sequences
from attention_to_bert.transformer import PositionalEncoding

# --- the partner task ---


def test_partner_sequences_shapes_and_dtypes():
    letters, digits, partners = partner_sequences(
        7, num_pairs=4, num_symbols=10, num_digits=3, seed=3
    )
    assert letters.shape == digits.shape == partners.shape == (7, 8)
    assert letters.dtype == digits.dtype == partners.dtype == torch.long
    assert 0 <= letters.min() and letters.max() < 10
    assert 0 <= digits.min() and digits.max() < 3


def test_every_letter_appears_twice_and_partners_point_to_the_other_copy():
    letters, _, partners = partner_sequences(200, num_pairs=5, num_symbols=16, seed=0)
    positions = torch.arange(10).expand(200, 10)
    assert (partners != positions).all(), "a token is never its own partner"
    assert torch.equal(letters.gather(1, partners), letters), "the partner holds the same letter"
    assert torch.equal(partners.gather(1, partners), positions), (
        "the partner's partner is the token itself"
    )
    for row in letters.tolist():
        assert sorted(row.count(symbol) for symbol in set(row)) == [2] * 5


def test_digits_are_independent_of_the_partner():
    _, digits, partners = partner_sequences(2000, num_pairs=5, num_digits=10, seed=0)
    same = (digits == digits.gather(1, partners)).float().mean().item()
    assert same == pytest.approx(0.1, abs=0.02), (
        "a partner's digit matches one's own only by chance"
    )
    assert torch.bincount(digits.flatten(), minlength=10).min() > 1500, "every digit is used"


def test_partner_sequences_are_seeded_and_varied():
    first = partner_sequences(50, seed=1)
    again = partner_sequences(50, seed=1)
    other = partner_sequences(50, seed=2)
    assert all(torch.equal(a, b) for a, b in zip(first, again, strict=True))
    assert not torch.equal(first[0], other[0]) and not torch.equal(first[1], other[1])
    assert len({tuple(row) for row in first[0].tolist()}) == 50, "no sequence repeats"
    assert len(set(first[0][:, 0].tolist())) > 8, "the order is random: every letter can come first"


def test_partner_sequences_do_not_touch_global_random_state():
    torch.manual_seed(0)
    expected = torch.rand(1)
    torch.manual_seed(0)
    partner_sequences(10, seed=5)
    assert torch.equal(torch.rand(1), expected)


def test_partner_symbols_name_the_ids():
    letters, _, _ = partner_sequences(1, num_pairs=26, num_symbols=26, seed=0)
    assert "".join(sorted({PARTNER_SYMBOLS[i] for i in letters[0].tolist()})) == PARTNER_SYMBOLS


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"num_sequences": 0}, ValueError, "num_sequences must be >= 1, got 0"),
        ({"num_sequences": 2.0}, TypeError, "num_sequences must be an int, got float"),
        ({"num_sequences": 2, "num_pairs": 0}, ValueError, "num_pairs must be >= 1, got 0"),
        ({"num_sequences": 2, "num_pairs": True}, TypeError, "num_pairs must be an int, got bool"),
        ({"num_sequences": 2, "num_digits": 0}, ValueError, "num_digits must be >= 1, got 0"),
        (
            {"num_sequences": 2, "num_pairs": 6, "num_symbols": 5},
            ValueError,
            "num_symbols must be >= 6",
        ),
        (
            {"num_sequences": 2, "num_symbols": 27},
            ValueError,
            "between num_pairs (5) and 26, got 27",
        ),
    ],
)
def test_partner_sequences_rejects_bad_arguments(kwargs, error, message):
    with pytest.raises(error, match=message.replace("(", r"\(").replace(")", r"\)")):
        partner_sequences(**kwargs)


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
