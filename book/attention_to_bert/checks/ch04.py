"""The checkers of chapter 4: self-attention, the sinusoidal positional encoding, a self-attention
module with a padding mask and dropout, the half-split rotary position embeddings (RoPE) of LLaMA,
and a window of offsets around each query."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch import nn

from attention_to_bert.checks.checker import Checker, close, vary


def self_attention_cases() -> list[tuple[str, tuple[torch.Tensor, ...]]]:
    """The test cases of ``self_attention``: (description, (x, w_q, w_k, w_v)), all float32, the dtype
    of an ``nn.Linear``, so that a student may use one."""
    generator = torch.Generator().manual_seed(4)
    shapes = [
        ("a batch of 2 sequences of 5 tokens, d_model=8, d_k=4, d_v=6", (2, 5, 8), 4, 6, 1.0),
        ("one sequence of 3 tokens, d_model=6, d_k=12, d_v=6", (1, 3, 6), 12, 6, 1.0),
        # scaled scores with a median size of about 8,600: exp() overflows without the max trick
        ("large inputs (scores in the thousands), d_model=8, d_k=2, d_v=3", (2, 4, 8), 2, 3, 6.0),
    ]
    cases = []
    for case, x_shape, d_k, d_v, size in shapes:
        sizes = vary(*x_shape, d_k, d_v)  # other sizes in a hidden test
        if sizes != (*x_shape, d_k, d_v):
            *x_shape, d_k, d_v = sizes
            large = "large inputs (scores in the thousands), " if size > 1 else ""
            case = f"{large}x of shape {tuple(x_shape)}, d_k={d_k}, d_v={d_v}"
        x = size * torch.randn(*x_shape, generator=generator)
        w_q, w_k = (size * torch.randn(x_shape[-1], d_k, generator=generator) for _ in range(2))
        w_v = torch.randn(x_shape[-1], d_v, generator=generator)
        cases.append((case, (x, w_q, w_k, w_v)))
    return cases


def self_attention(candidate: Callable[..., Any]) -> bool:
    """Check ``candidate(x, w_q, w_k, w_v) -> (output, weights)``: with Q, K, V = x w_q, x w_k, x w_v,
    weights = softmax(Q K^T / sqrt(d_k)) over the keys and output = weights V."""
    checker = Checker("self_attention")
    for case, inputs in self_attention_cases():
        passed = tuple(t.clone() for t in inputs)
        result = checker.call(candidate, *passed, case=case, pair="(output, weights)")
        output, weights = result or (None, None)  # None: nothing to check
        x, w_q, w_k, w_v = (t.double() for t in inputs)
        d_k = w_k.shape[-1]
        scores = (x @ w_q) @ (x @ w_k).mT
        expected = torch.softmax(scores / d_k**0.5, dim=-1)
        wrong_scores = [
            (scores, "not scaled: divide the scores Q K^T by sqrt(d_k)"),
            (scores / d_k, "divided by d_k; divide by sqrt(d_k) instead"),
            (scores / x.shape[-1] ** 0.5, "divided by sqrt(d_model); d_k is the size of a query"),
            (scores.mT / d_k**0.5, "transposed: row i must hold query i's weights (K Q^T?)"),
        ]
        mistakes = [(torch.softmax(wrong, dim=-1), message) for wrong, message in wrong_scores]
        masked = torch.tensor(False)  # nothing
        if checker.compare(weights, expected, f"{case}: weights", mistakes, 1e-4, masked):
            mixes_x = [(expected @ x, "the output mixes the inputs x, not the values V = x @ w_v")]
            checker.compare(output, expected @ x @ w_v, f"{case}: output", mixes_x, 1e-4)
    return checker.report()


def positional_encoding(candidate: Callable[[int, int], torch.Tensor]) -> bool:
    """Check ``candidate(max_len, d_model)``: PE[pos, 2i] = sin(pos / 10000^(2i/d_model)), PE[pos, 2i+1] = cos(same)."""
    checker = Checker("positional_encoding")
    for max_len, half in [(50, 8), (7, 3), (1, 2)]:
        max_len, half = vary(max_len, half)
        d_model = 2 * half
        case = f"max_len={max_len}, d_model={d_model}"
        position, j = torch.arange(max_len, dtype=torch.float64)[:, None], torch.arange(d_model)
        even = j % 2 == 0
        angle = position / 10000.0 ** ((j - j % 2) / d_model)  # 2i / d_model, shared by a pair
        by_index = position / 10000.0 ** (j / d_model)
        expected = torch.where(even, angle.sin(), angle.cos())
        swapped = torch.where(even, angle.cos(), angle.sin())
        by_j = torch.where(even, by_index.sin(), by_index.cos())
        halves = torch.cat([expected[:, even], expected[:, ~even]], dim=-1)
        mistakes = [
            (swapped, "sin and cos swapped: dimensions 2i take the sine, 2i+1 the cosine"),
            (halves, "sines in the first half, cosines in the second; the paper interleaves them"),
            (by_j, "the exponent uses the dimension index j; use 2i / d_model with i = j // 2"),
        ]
        actual = checker.call(candidate, max_len, d_model, case=case)
        checker.compare(actual, expected, case, mistakes, atol=1e-4)
    return checker.report()


def _masked_reference(
    module: nn.Module, x: torch.Tensor, lengths: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Scores, padding mask (True = padded key), weights and values of ``module``'s projections, in float64."""
    with torch.no_grad():
        query, key, value = (getattr(module, name)(x).double() for name in ("w_q", "w_k", "w_v"))
    scores = query @ key.mT / query.shape[-1] ** 0.5
    padded = torch.arange(x.shape[1], device=x.device)[None, :] >= lengths[:, None]  # (batch, n)
    weights = torch.softmax(scores.masked_fill(padded[:, None, :], float("-inf")), dim=-1)
    return scores, padded, weights, value


def masked_self_attention(candidate: Callable[..., Any]) -> bool:
    """Check a module class ``candidate(d_model, d_k, dropout)``: ``w_q``, ``w_k``, ``w_v`` are
    ``nn.Linear(d_model, d_k, bias=False)`` layers; ``forward(x, lengths)`` returns ``(output, weights)``,
    scaled dot-product self-attention in which the keys after ``lengths[b]`` (padding) get weight 0,
    with dropout on the weights in training mode only."""
    checker = Checker("masked_self_attention")
    if _still_a_stub(candidate):
        checker.expect(
            False,
            "the class is still the stub: write __init__(self, d_model, d_k, dropout=0.0), which "
            "builds w_q, w_k and w_v, and forward(self, x, lengths)",
        )
        return checker.report()
    generator = torch.Generator().manual_seed(5)
    cases = [
        ("2 sequences of lengths 5 and 3", (2, 5, 8, 4), [5, 3]),
        ("3 sequences of lengths 1, 4 and 2", (3, 4, 6, 6), [1, 4, 2]),
    ]
    for case, (batch, n, d_model, d_k), given in cases:
        n, d_model, d_k = vary(n, d_model, d_k)  # other sizes in a hidden test
        case = f"{case}, padded to {n}, d_model={d_model}, d_k={d_k}"
        module = checker.call(candidate, d_model, d_k, 0.5, case=f"{case}: building the module")
        if module is None:
            continue
        layers = [getattr(module, name, None) for name in ("w_q", "w_k", "w_v")]
        if not checker.expect(
            all(isinstance(layer, nn.Linear) for layer in layers)
            and all(layer.weight.shape == (d_k, d_model) for layer in layers),
            f"{case}: the module needs w_q, w_k, w_v = nn.Linear(d_model, d_k, bias=False)",
        ):
            continue
        if not checker.expect(
            all(layer.bias is None for layer in layers),
            f"{case}: w_q, w_k, w_v have a bias; the exercise asks for nn.Linear(d_model, d_k, "
            "bias=False), the layers of the chapter",
        ):
            continue
        x = torch.randn(batch, n, d_model, generator=generator)
        lengths = torch.tensor(given)
        scores, padded, expected, value = _masked_reference(module, x, lengths)
        keys_masked = padded[:, None, :].expand_as(expected)
        mistakes = [
            (
                torch.softmax((scores * d_k**0.5).masked_fill(keys_masked, float("-inf")), -1),
                "not scaled: divide the scores by sqrt(d_k)",
            ),
        ]
        module.eval()
        result = checker.call(
            module, x.clone(), lengths.clone(), case=f"{case}, eval mode", pair="(output, weights)"
        )
        output, weights = result or (None, None)
        name = f"{case}, eval mode"
        named = _eval_mode_mistake(weights, scores, expected, keys_masked)
        if named:
            checker.expect(False, f"{name}: weights: {named}")
            continue
        if not checker.compare(weights, expected, f"{name}: weights", mistakes, 1e-4, keys_masked):
            continue
        if not checker.compare(output, expected @ value, f"{name}: output", (), 1e-4):
            continue
        module.train()
        # the dropout draws: the CPU generator seeded alone (torch.manual_seed would reseed CUDA's
        # too), inside fork_rng, which puts its state back
        with torch.random.fork_rng(devices=[]):
            torch.default_generator.manual_seed(0)
            result = checker.call(
                module,
                x.clone(),
                lengths.clone(),
                case=f"{case}, training mode",
                pair="(output, weights)",
            )
        if result is None or not isinstance(result[1], torch.Tensor):
            continue
        dropped = result[1].detach().double()
        kept = dropped != 0
        checker.expect(
            dropped.shape == expected.shape
            and bool(kept.sum() < (expected > 0).sum())
            and torch.allclose(dropped[kept], 2 * expected[kept], atol=1e-4),
            f"{case}, training mode: dropout p=0.5 on the weights must zero some weights and double "
            "the others (F.dropout(weights, p, training=self.training))",
        )
    return checker.report()


def _still_a_stub(candidate: Any) -> bool:
    """Whether ``candidate`` is a module class that defines neither ``__init__`` nor ``forward``
    (the student edition's ``class MaskedSelfAttention(nn.Module): ...``)."""
    return (
        isinstance(candidate, type)
        and issubclass(candidate, nn.Module)
        and candidate.__init__ is nn.Module.__init__
        and candidate.forward is nn.Module.forward
    )


def _eval_mode_mistake(
    weights: Any, scores: torch.Tensor, expected: torch.Tensor, keys_masked: torch.Tensor
) -> str | None:
    """Name a wrong answer in eval mode: dropout left on, or the softmax over the queries."""
    if not isinstance(weights, torch.Tensor) or weights.shape != expected.shape:
        return None
    actual = weights.detach().double()
    kept, positive = actual != 0, expected > 0
    if (
        bool(kept.sum() < positive.sum())
        and bool((kept <= positive).all())
        and torch.allclose(actual[kept], 2 * expected[kept], atol=1e-4)
    ):
        return (
            "some weights are 0 and the others doubled: dropout in eval mode; module.eval() must "
            "turn it off (F.dropout(weights, p, training=self.training))"
        )
    for fill in (float("-inf"), -1e9):
        over_queries = torch.softmax(scores.masked_fill(keys_masked, fill), dim=-2)
        if close(actual, over_queries, 1e-4, equal_nan=True):
            return (
                "the softmax ran over the queries (dim=-2): each query's weights over the keys "
                "must sum to 1, softmax(scores, dim=-1)"
            )
    return None


def _rope_reference(
    x: torch.Tensor, positions: torch.Tensor, sign: float = 1.0, step: int = 2, halves: bool = False
) -> torch.Tensor:
    """Rotary embedding of ``x`` (..., n, d) at ``positions`` (n,), in float64; the arguments make
    the typical mistakes: the other direction, the frequency exponent j/d, pairs (j, j + d/2)."""
    x = x.double()
    d = x.shape[-1]
    if step == 2:
        frequency = 10000.0 ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
    else:  # the exponent j / d with j = 0, 1, 2, ... (half the right one)
        frequency = 10000.0 ** (-torch.arange(0, d // 2, dtype=torch.float64) / d)
    angle = sign * positions.double()[:, None] * frequency  # (n, d/2)
    if halves:
        first, second = x[..., : d // 2], x[..., d // 2 :]
    else:
        first, second = x[..., 0::2], x[..., 1::2]
    turned_first = first * angle.cos() - second * angle.sin()
    turned_second = first * angle.sin() + second * angle.cos()
    out = torch.empty_like(x)
    if halves:
        out[..., : d // 2], out[..., d // 2 :] = turned_first, turned_second
    else:
        out[..., 0::2], out[..., 1::2] = turned_first, turned_second
    return out


def _rope_half_reference(
    x: torch.Tensor, positions: torch.Tensor, sign: float = 1.0, mistake: str = ""
) -> torch.Tensor:
    """LLaMA's rotary embedding of ``x`` (..., n, d) at ``positions`` (n,), in float64: dimension j
    and j + d/2 turned together by the angle p * 10000^(-2j/d). ``mistake`` makes a typical wrong
    answer: "interleaved" (pairs 2j, 2j + 1), "repeat_interleave" (each angle repeated in place, so
    j and j + d/2 turn by different angles), "exponent" (10000^(-j/d))."""
    if mistake == "interleaved":
        return _rope_reference(x, positions, sign=sign)
    x = x.double()
    d = x.shape[-1]
    half = d // 2
    j = torch.arange(0, half, dtype=torch.float64)
    exponent = j / d if mistake == "exponent" else 2 * j / d
    angle = sign * positions.double()[:, None] * 10000.0 ** (-exponent)  # (n, d/2)
    if mistake == "repeat_interleave":
        full = angle.repeat_interleave(2, dim=-1)  # (n, d): angle of j at 2j and 2j + 1
    else:
        full = torch.cat([angle, angle], dim=-1)  # the same angle at j and j + d/2
    rotated_half = torch.cat([-x[..., half:], x[..., :half]], dim=-1)
    return x * full.cos() + rotated_half * full.sin()


def rope_half(candidate: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]) -> bool:
    """Check ``candidate(x, positions)``, LLaMA's form of RoPE: dimensions j and j + d/2 of the
    vector at position p turned together by the angle p * 10000^(-2j/d), j < d/2:
    x_j' = x_j cos - x_{j+d/2} sin, x_{j+d/2}' = x_j sin + x_{j+d/2} cos."""
    checker = Checker("rope_half")
    generator = torch.Generator().manual_seed(7)
    cases = [
        ("one sequence of 5 vectors of size 8, positions 0..4", (5, 4), None),
        ("a batch of 2 x 3 vectors of size 12, positions 3, 7, 10", (2, 3, 6), [3, 7, 10]),
    ]
    for case, sizes, given in cases:
        *leading, half = vary(*sizes)  # other sizes in a hidden test
        n = leading[-1]
        if (*leading, half) == sizes:
            positions = torch.tensor(given) if given else torch.arange(n)
        else:  # a hidden test: other sizes, and positions out of order
            positions = torch.randperm(3 * n, generator=generator)[:n]
            case = f"x of shape {(*leading, 2 * half)}, positions {positions.tolist()}"
        x = torch.randn(*leading, 2 * half, generator=generator)
        actual = checker.call(candidate, x.clone(), positions.clone(), case=case)
        mistakes = [
            (
                _rope_half_reference(x, positions, mistake="interleaved"),
                "pairs (2j, 2j + 1): that is the chapter's rope; LLaMA pairs j with j + d/2",
            ),
            (
                _rope_half_reference(x, positions, sign=-1.0),
                "turned the wrong way: x_j' = x_j cos - x_{j+d/2} sin, "
                "x_{j+d/2}' = x_j sin + x_{j+d/2} cos",
            ),
            (
                _rope_half_reference(x, positions, mistake="repeat_interleave"),
                "dimensions j and j + d/2 must share one angle: repeat the angles with torch.cat, "
                "not repeat_interleave",
            ),
            (
                _rope_half_reference(x, positions, mistake="exponent"),
                "pair j turns at 10000^(-2j/d): the exponent uses 2j, not j",
            ),
        ]
        checker.compare(actual, _rope_half_reference(x, positions), case, mistakes, atol=1e-4)
    return checker.report()


def window_mask(candidate: Callable[[int, int], torch.Tensor]) -> bool:
    """Check ``candidate(n, width)``: a bool ``(n, n)`` mask, True where query i may not attend to key
    j because they are more than ``width`` apart, |i - j| > width (exercise 4.4 (b))."""
    checker = Checker("window_mask")
    for n, width in [(6, 2), (5, 0), (4, 9)]:
        n, width = vary(n, width)
        case = f"n={n}, width={width} (True must mark |i - j| > width)"
        offsets = torch.arange(n)[None, :] - torch.arange(n)[:, None]  # j - i
        expected = offsets.abs() > width
        mistakes = [
            (~expected, "polarity inverted: True must mean 'may NOT attend', outside the window"),
            (
                offsets.abs() >= width,
                "a key exactly `width` away is inside the window: use >, not >=",
            ),
            (offsets < -width, "only the left side is cut: mask keys too far right as well"),
            (offsets > width, "only the right side is cut: mask keys too far left as well"),
        ]
        actual = checker.call(candidate, n, width, case=case)
        if isinstance(actual, torch.Tensor) and actual.dtype != torch.bool:
            message = "return a bool mask (True = may not attend), not an additive 0 / -inf one"
            checker.expect(False, f"{case}: dtype {actual.dtype}; {message}")
        else:
            checker.compare(actual, expected, case, mistakes)
    return checker.report()
