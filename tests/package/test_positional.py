"""The sinusoidal positional encoding (positional.py): the formula, odd widths, clear errors."""

import math

import pytest
import torch

from attention_to_bert.positional import PositionalEncoding


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
    with pytest.raises(ValueError, match=r"d_model=8\) = \(2, 5, 8\), got \(2, 5, 7\)"):
        encoding(torch.zeros(2, 5, 7))
    with pytest.raises(ValueError, match="shape"):
        encoding(torch.zeros(5, 8))
