"""Checkers for the coding exercises: call one on your own function to hear what is wrong with it.

Example::

    from attention_to_bert import checks
    checks.masked_softmax(my_masked_softmax)

A checker runs the function on a few test cases, prints either that it passes or, in plain words,
the first thing wrong on each failing case (an exception, a wrong shape, NaN, not normalised, wrong
values), and returns ``True`` or ``False``. Each chapter adds its checkers below the shared tools.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch


class Checker:
    """Collects the results of the test cases of one exercise and reports them."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.problems: list[str] = []
        self.cases = 0

    def call(self, function: Callable[..., Any], *args: Any, case: str = "", **kwargs: Any) -> Any:
        """Call the student's function; an exception, or no return value (a stub), is recorded as a problem.

        Returns the function's result, or None when there is nothing to check further.
        """
        self.cases += 1
        try:
            result = function(*args, **kwargs)
        except Exception as error:  # the student's code may raise anything: report it, don't crash
            self.problems.append(f"{case or 'a test case'}: raised {type(error).__name__}: {error}")
            return None
        if result is None:
            self.problems.append(
                f"{case or 'a test case'}: returned None; return the result (is the function body still `...`?)"
            )
        return result

    def expect(self, condition: bool, message: str) -> bool:
        """Record ``message`` as a problem unless ``condition`` holds."""
        if not condition:
            self.problems.append(message)
        return bool(condition)

    def close(self, actual: Any, expected: torch.Tensor, what: str, *, atol: float = 1e-5, rtol: float = 1e-4) -> bool:
        """Check that ``actual`` is a tensor of ``expected``'s shape, free of NaN, and close to it."""
        if actual is None:
            return False
        if not isinstance(actual, torch.Tensor):
            return self.expect(False, f"{what}: expected a torch.Tensor, got {type(actual).__name__}")
        if tuple(actual.shape) != tuple(expected.shape):
            return self.expect(
                False, f"{what}: expected shape {tuple(expected.shape)}, got {tuple(actual.shape)}"
            )
        actual = actual.detach().to(torch.float64)
        expected = expected.detach().to(torch.float64)
        if torch.isnan(actual).any() and not torch.isnan(expected).any():
            return self.expect(False, f"{what}: contains NaN (a fully masked row must give zeros, not NaN)")
        difference = (actual - expected).abs().max().item() if actual.numel() else 0.0
        return self.expect(
            torch.allclose(actual, expected, atol=atol, rtol=rtol),
            f"{what}: values differ from the expected ones (largest difference {difference:.3g})",
        )

    def report(self) -> bool:
        """Print the verdict and return whether every case passed."""
        if not self.problems:
            print(f"✔ {self.name}: passes all {self.cases} test cases.")
            return True
        print(f"✘ {self.name}: {len(self.problems)} problem(s) found.")
        for problem in self.problems:
            print(f"  - {problem}")
        return False


# Chapter checkers are added below, one section per chapter.


# --- Chapter 1: masked softmax and the scaled dot-product score ---


def _reference_masked_softmax(scores: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    weights = torch.softmax(scores.double().masked_fill(mask, float("-inf")), dim=-1)
    return torch.nan_to_num(weights, nan=0.0)  # a fully masked row: 0/0 -> 0


def _diagnose_masked_softmax(
    checker: Checker, actual: Any, scores: torch.Tensor, mask: torch.Tensor, case: str
) -> None:
    """Name the first typical mistake visible in ``actual``; fall back to a plain value comparison."""
    expected = _reference_masked_softmax(scores, mask)
    if not isinstance(actual, torch.Tensor) or tuple(actual.shape) != tuple(expected.shape):
        checker.close(actual, expected, case)
        return
    weights = actual.detach().double()
    masked = mask.expand_as(weights)
    fully_masked_rows = masked.all(dim=-1)
    if not torch.isfinite(weights).all():
        if (~torch.isfinite(weights))[fully_masked_rows].any():
            checker.expect(False, f"{case}: a fully masked row gives NaN; it must give all-zero weights")
        else:
            checker.expect(
                False,
                f"{case}: NaN or inf in the weights; subtract each row's maximum before exp (or use torch.softmax)",
            )
        return
    weight_on_masked = weights[masked].abs().sum().item()
    if weight_on_masked > 1e-6:
        free = ~masked & ~fully_masked_rows.unsqueeze(-1)
        if free.any() and weights[free].abs().max() < 1e-6:
            checker.expect(
                False,
                f"{case}: mask polarity inverted: the weight goes where mask is True (True means 'may not attend')",
            )
        else:
            checker.expect(False, f"{case}: positions where mask is True get weight; they must get exactly 0")
        return
    row_sums = weights.sum(dim=-1)[~fully_masked_rows]
    if not torch.allclose(row_sums, torch.ones_like(row_sums), atol=1e-4):
        column_sums = weights.sum(dim=-2)
        if weights.shape[-2] > 1 and torch.allclose(column_sums, torch.ones_like(column_sums), atol=1e-4):
            checker.expect(
                False, f"{case}: normalised over the wrong dimension; each row (the last dimension) must sum to 1"
            )
        else:
            checker.expect(False, f"{case}: the weights of a row (last dimension) do not sum to 1")
        return
    checker.close(actual, expected, case)


def masked_softmax(candidate: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]) -> bool:
    """Check ``candidate(scores, mask)``, a softmax over the last dimension that ignores masked positions.

    ``mask`` is a bool tensor broadcastable to ``scores`` (True = may not attend). Expected: weight 0
    at masked positions, rows summing to 1, all-zero rows (no NaN, also in the gradient) where every
    position is masked, the shape of ``scores``.
    """
    checker = Checker("masked_softmax")
    generator = torch.Generator().manual_seed(1)
    scores = torch.randn(2, 3, 5, generator=generator)
    padding = torch.tensor([[False, False, False, True, True], [False, True, True, True, True]])
    with_empty_row = torch.rand(2, 3, 5, generator=generator) > 0.5
    with_empty_row[:, :, 0] = False
    with_empty_row[1, 2] = True  # query 2 of example 1 may attend to nothing
    cases = [
        ("no position masked", scores, torch.zeros(2, 3, 5, dtype=torch.bool)),
        ("a padding mask of shape (2, 1, 5) broadcast over the queries", scores, padding[:, None, :]),
        ("a single query (scores of shape (2, 1, 5))", scores[:, :1], padding[:, None, :]),
        ("a fully masked row", scores, with_empty_row),
        ("large scores (up to about 1000)", 400 * scores, padding[:, None, :]),
    ]
    for case, case_scores, case_mask in cases:
        actual = checker.call(candidate, case_scores.clone(), case_mask.clone(), case=case)
        if actual is not None:
            _diagnose_masked_softmax(checker, actual, case_scores, case_mask, case)

    case = "the gradient through a fully masked row"
    leaf = scores.clone().requires_grad_()
    actual = checker.call(candidate, leaf, with_empty_row.clone(), case=case)
    if isinstance(actual, torch.Tensor) and actual.shape == scores.shape and actual.requires_grad:
        try:
            (actual * torch.arange(5.0)).sum().backward()
        except Exception as error:  # report, don't crash
            checker.expect(False, f"{case}: backward() raised {type(error).__name__}: {error}")
        else:
            checker.expect(
                leaf.grad is not None and not torch.isnan(leaf.grad).any(),
                f"{case}: the gradient contains NaN; a softmax over a row of -inf is NaN and zeroing it "
                "afterwards does not clean the gradient (fill masked scores with a large negative number)",
            )
    elif isinstance(actual, torch.Tensor) and actual.shape == scores.shape:
        checker.expect(False, f"{case}: the result does not carry a gradient (do not detach or rebuild it)")
    return checker.report()


def scaled_dot_score(candidate: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]) -> bool:
    """Check ``candidate(query, key)``: ``q · k / sqrt(d)`` for every query and key, shape ``(..., n_q, n_k)``."""
    checker = Checker("scaled_dot_score")
    generator = torch.Generator().manual_seed(2)
    cases = [
        ("query (3, 16) and key (5, 16)", (3, 16), (5, 16)),
        ("a batch: query (2, 3, 16) and key (2, 5, 16)", (2, 3, 16), (2, 5, 16)),
        ("one query (1, 9) against keys (4, 9)", (1, 9), (4, 9)),
    ]
    for case, query_shape, key_shape in cases:
        query = torch.randn(*query_shape, generator=generator)
        key = torch.randn(*key_shape, generator=generator)
        dot = query.double() @ key.double().transpose(-2, -1)
        d, n_k = query.shape[-1], key.shape[-2]
        actual = checker.call(candidate, query.clone(), key.clone(), case=case)
        if actual is None:
            continue
        if not isinstance(actual, torch.Tensor) or actual.shape != dot.shape:
            if isinstance(actual, torch.Tensor) and actual.shape == dot.transpose(-2, -1).shape:
                checker.expect(False, f"{case}: transposed; the shape must be (..., n_q, n_k), one row per query")
            else:
                checker.close(actual, dot, case)  # reports the wrong type or shape
            continue
        value = actual.detach().double()
        wrong_scalings = [
            (dot, "not scaled: divide the dot products by sqrt(d)"),
            (dot / d, "divided by d; divide by sqrt(d) instead"),
            (dot / n_k**0.5, "divided by the square root of the number of keys; d is the feature size"),
        ]
        for wrong, message in wrong_scalings:
            if torch.allclose(value, wrong, atol=1e-4, rtol=1e-4):
                checker.expect(False, f"{case}: {message}")
                break
        else:
            checker.close(actual, dot / d**0.5, case)
    return checker.report()


# --- Chapter 4: self-attention and the sinusoidal positional encoding ---


def _reference_self_attention(
    x: torch.Tensor, w_q: torch.Tensor, w_k: torch.Tensor, w_v: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    x, w_q, w_k, w_v = (t.double() for t in (x, w_q, w_k, w_v))
    query, key, value = x @ w_q, x @ w_k, x @ w_v
    weights = torch.softmax(query @ key.transpose(-2, -1) / w_q.shape[-1] ** 0.5, dim=-1)
    return weights @ value, weights


def self_attention(candidate: Callable[..., Any]) -> bool:
    """Check ``candidate(x, w_q, w_k, w_v) -> (output, weights)``, single-head self-attention.

    ``x`` is ``(batch, n, d_model)``, ``w_q`` and ``w_k`` are ``(d_model, d_k)``, ``w_v`` is
    ``(d_model, d_v)``; the answer is ``output`` ``(batch, n, d_v)`` and ``weights`` ``(batch, n, n)``
    with ``weights = softmax(Q K^T / sqrt(d_k))`` row by row and ``output = weights V``.
    """
    checker = Checker("self_attention")
    generator = torch.Generator().manual_seed(4)
    cases = [
        ("a batch of 2 sequences of 5 tokens, d_model=8, d_k=4, d_v=6", (2, 5, 8), 4, 6, 1.0),
        ("one sequence of 3 tokens, d_model=6, d_k=12, d_v=6", (1, 3, 6), 12, 6, 1.0),
        ("large inputs (scores in the hundreds), d_model=8, d_k=2, d_v=3", (2, 4, 8), 2, 3, 6.0),
    ]
    for case, x_shape, d_k, d_v, size in cases:
        d_model = x_shape[-1]
        x = size * torch.randn(*x_shape, generator=generator)
        w_q, w_k = (size * torch.randn(d_model, d_k, generator=generator) for _ in range(2))
        w_v = torch.randn(d_model, d_v, generator=generator)
        result = checker.call(candidate, x.clone(), w_q.clone(), w_k.clone(), w_v.clone(), case=case)
        if result is None:
            continue
        if not isinstance(result, tuple | list) or len(result) != 2:
            checker.expect(False, f"{case}: return a pair (output, weights), got {type(result).__name__}")
            continue
        output, weights = result
        expected_output, expected_weights = _reference_self_attention(x, w_q, w_k, w_v)
        if _diagnose_self_attention_weights(checker, weights, x, w_q, w_k, expected_weights, case):
            if (
                isinstance(output, torch.Tensor)
                and output.shape == x.shape
                and torch.allclose(output.detach().double(), expected_weights @ x.double(), atol=1e-4)
            ):
                checker.expect(False, f"{case}: the output mixes the inputs x; it must mix the values V = x @ w_v")
                continue
            checker.close(output, expected_output, f"{case}: output", atol=1e-4)
    return checker.report()


def _diagnose_self_attention_weights(
    checker: Checker,
    weights: Any,
    x: torch.Tensor,
    w_q: torch.Tensor,
    w_k: torch.Tensor,
    expected: torch.Tensor,
    case: str,
) -> bool:
    """Name the first typical mistake in the attention weights; return True when they are right."""
    if not isinstance(weights, torch.Tensor) or tuple(weights.shape) != tuple(expected.shape):
        return checker.close(weights, expected, f"{case}: weights")
    value = weights.detach().double()
    if not torch.isfinite(value).all():
        return checker.expect(
            False, f"{case}: NaN or inf in the weights; subtract each row's maximum before exp (or use torch.softmax)"
        )
    if not torch.allclose(value.sum(dim=-1), torch.ones_like(value[..., 0]), atol=1e-4):
        if torch.allclose(value.sum(dim=-2), torch.ones_like(value[..., 0]), atol=1e-4):
            return checker.expect(
                False, f"{case}: the columns sum to 1, not the rows: take the softmax over the last dimension (keys)"
            )
        return checker.expect(False, f"{case}: the rows of the weights do not sum to 1")
    query, key = x.double() @ w_q.double(), x.double() @ w_k.double()
    scores = query @ key.transpose(-2, -1)
    d_k, d_model = w_q.shape[-1], x.shape[-1]
    mistakes = [
        (scores, "not scaled: divide the scores Q K^T by sqrt(d_k)"),
        (scores / d_k, "divided by d_k; divide by sqrt(d_k) instead"),
        (scores / d_model**0.5, "divided by sqrt(d_model); d_k is the size of the queries and keys (w_q's columns)"),
        (scores.transpose(-2, -1) / d_k**0.5, "transposed: row i must hold query i's weights over the keys (K Q^T?)"),
    ]
    for wrong_scores, message in mistakes:
        wrong = torch.softmax(wrong_scores, dim=-1)
        if not torch.allclose(wrong, expected, atol=1e-4) and torch.allclose(value, wrong, atol=1e-4):
            return checker.expect(False, f"{case}: {message}")
    return checker.close(weights, expected, f"{case}: weights", atol=1e-4)


def _reference_positional_encoding(
    max_len: int, d_model: int, *, swap: bool = False, halves: bool = False, exponent_from_dimension: bool = False
) -> torch.Tensor:
    """The sinusoidal table in float64; the keyword arguments build the typical wrong variants."""
    position = torch.arange(max_len, dtype=torch.float64)[:, None]
    pair = torch.arange(0, d_model, 2, dtype=torch.float64)  # 2i
    angle = position / 10000.0 ** (pair / d_model)
    sines, cosines = torch.sin(angle), torch.cos(angle[:, : d_model // 2])
    if exponent_from_dimension:  # pos / 10000^(j / d) with j the dimension index, odd j too
        odd = torch.arange(1, d_model, 2, dtype=torch.float64)
        cosines = torch.cos(position / 10000.0 ** (odd / d_model))
    if swap:
        sines, cosines = torch.cos(angle), torch.sin(angle[:, : d_model // 2])
    if halves:
        return torch.cat([sines, cosines], dim=-1)
    table = torch.zeros(max_len, d_model, dtype=torch.float64)
    table[:, 0::2], table[:, 1::2] = sines, cosines
    return table


def positional_encoding(candidate: Callable[[int, int], torch.Tensor]) -> bool:
    """Check ``candidate(max_len, d_model)``: the ``(max_len, d_model)`` sinusoidal table of Vaswani et al.

    ``PE[pos, 2i] = sin(pos / 10000^(2i / d_model))`` and ``PE[pos, 2i + 1] = cos(pos / 10000^(2i / d_model))``.
    """
    checker = Checker("positional_encoding")
    mistakes = [
        ({"swap": True}, "sin and cos swapped: even dimensions 2i take the sine, odd dimensions 2i+1 the cosine"),
        (
            {"halves": True},
            "sines in the first half and cosines in the second: some libraries do that, but the paper (and this "
            "book) interleave them: sin in the even dimensions, cos in the odd ones",
        ),
        (
            {"exponent_from_dimension": True},
            "the exponent uses the dimension index j; use 2i / d_model with i = j // 2, so that the sine and the "
            "cosine of a pair share one frequency",
        ),
    ]
    for max_len, d_model in [(50, 16), (7, 6), (1, 4)]:
        case = f"max_len={max_len}, d_model={d_model}"
        actual = checker.call(candidate, max_len, d_model, case=case)
        if actual is None:
            continue
        expected = _reference_positional_encoding(max_len, d_model)
        if isinstance(actual, torch.Tensor) and actual.shape == expected.shape and torch.isfinite(actual).all():
            value = actual.detach().double()
            for variant, message in mistakes:
                wrong = _reference_positional_encoding(max_len, d_model, **variant)
                if not torch.allclose(wrong, expected, atol=1e-4) and torch.allclose(value, wrong, atol=1e-4):
                    checker.expect(False, f"{case}: {message}")
                    break
            else:
                checker.close(actual, expected, case, atol=1e-4)
        else:
            checker.close(actual, expected, case, atol=1e-4)
    return checker.report()


# --- Chapter 5: splitting into heads and the causal mask ---


def split_heads(candidate: Callable[[torch.Tensor, int], torch.Tensor]) -> bool:
    """Check ``candidate(x, num_heads)``: ``(batch, seq, d_model)`` -> ``(batch, heads, seq, d_model // heads)``.

    Head ``h`` must get the consecutive features ``h * head_dim .. (h + 1) * head_dim`` of every position.
    """
    checker = Checker("split_heads")
    generator = torch.Generator().manual_seed(5)
    cases = [((2, 5, 12), 3), ((1, 4, 8), 2), ((3, 6, 16), 4), ((2, 3, 8), 1)]
    for shape, heads in cases:
        batch, seq, d_model = shape
        head_dim = d_model // heads
        case = f"x of shape {shape}, num_heads={heads}"
        x = torch.randn(*shape, generator=generator)
        expected = x.view(batch, seq, heads, head_dim).transpose(1, 2)
        actual = checker.call(candidate, x.clone(), heads, case=case)
        if actual is None:
            continue
        if isinstance(actual, torch.Tensor) and tuple(actual.shape) == (batch, seq, heads, head_dim) and seq != heads:
            checker.expect(
                False, f"{case}: got shape (batch, seq, heads, head_dim); swap the seq and heads axes (transpose(1, 2))"
            )
            continue
        if isinstance(actual, torch.Tensor) and actual.shape == expected.shape and heads > 1:
            value = actual.detach()
            if torch.equal(value, x.reshape(batch, heads, seq, head_dim)):
                checker.expect(
                    False,
                    f"{case}: reshaped straight to (batch, heads, seq, head_dim), which mixes up positions; "
                    "view as (batch, seq, heads, head_dim) first, then transpose(1, 2)",
                )
                continue
            if torch.equal(value, x.view(batch, seq, head_dim, heads).permute(0, 3, 1, 2)):
                checker.expect(
                    False,
                    f"{case}: each head took every heads-th feature; head h must take the consecutive "
                    "features h * head_dim .. (h + 1) * head_dim",
                )
                continue
        checker.close(actual, expected, case, atol=0.0, rtol=0.0)
    return checker.report()


def causal_mask(candidate: Callable[[int], torch.Tensor]) -> bool:
    """Check ``candidate(size)``: a bool ``(size, size)`` mask, True where position i may not attend to j (j > i)."""
    checker = Checker("causal_mask")
    for size in (1, 4, 7):
        case = f"size={size}"
        expected = torch.ones(size, size, dtype=torch.bool).triu(diagonal=1)
        actual = checker.call(candidate, size, case=case)
        if actual is None:
            continue
        if not isinstance(actual, torch.Tensor) or tuple(actual.shape) != (size, size):
            checker.close(actual, expected, case)  # names the wrong type or shape
            continue
        if actual.dtype != torch.bool:
            if actual.is_floating_point() and torch.isinf(actual).any():
                message = "an additive float mask (0 / -inf); return a bool mask, True = may not attend"
            else:
                message = f"dtype {actual.dtype}; the mask must be a bool tensor (True = may not attend)"
            checker.expect(False, f"{case}: {message}")
            continue
        wrong_masks = [
            (~expected, "polarity inverted: True must mean 'may NOT attend', i.e. the future above the diagonal"),
            (
                torch.ones(size, size, dtype=torch.bool).triu(),
                "the diagonal is masked too: a position may attend to itself (otherwise row 0 sees nothing)",
            ),
            (expected.T, "the past is masked instead of the future: query i may not see keys j > i"),
        ]
        for wrong, message in wrong_masks:
            if size > 1 and torch.equal(actual, wrong):
                checker.expect(False, f"{case}: {message}")
                break
        else:
            checker.expect(
                torch.equal(actual, expected),
                f"{case}: wrong mask; expected True exactly above the diagonal (j > i), got {actual.int().tolist()}",
            )
    return checker.report()


# --- Chapter 3: one attention step of the seq2seq decoder ---


def _reference_attention_step(
    state: torch.Tensor, encoder_outputs: torch.Tensor, lengths: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    scores = torch.einsum("bd,bsd->bs", state, encoder_outputs)
    padded = torch.arange(encoder_outputs.shape[1]) >= lengths[:, None]
    weights = torch.softmax(scores.masked_fill(padded, float("-inf")), dim=-1)
    return torch.einsum("bs,bsd->bd", weights, encoder_outputs), weights


def attention_step(candidate: Callable[[torch.Tensor, torch.Tensor, torch.Tensor], Any]) -> bool:
    """Check ``candidate(state, encoder_outputs, lengths) -> (context, weights)``, one decoder step of dot attention.

    ``state`` ``(batch, d)`` is the query s_{t-1}; ``encoder_outputs`` ``(batch, source_len, d)`` are keys and
    values; ``lengths`` ``(batch,)`` the real source lengths (the rest is padding). Expected: ``weights``
    ``(batch, source_len)`` = softmax over the real positions of s_{t-1} . h_j, exactly 0 on padding, and
    ``context`` ``(batch, d)`` = sum_j weights_j h_j.
    """
    checker = Checker("attention_step")
    generator = torch.Generator().manual_seed(3)
    cases = [
        ("3 sources of lengths 5, 2, 4 padded to 5", 3, 5, 4, [5, 2, 4]),
        ("2 sources without padding", 2, 4, 3, [4, 4]),
        ("a source of length 1 padded to 6", 1, 6, 2, [1]),
    ]
    for case, batch, source_len, size, lengths in cases:
        state = torch.randn(batch, size, generator=generator, dtype=torch.float64)
        outputs = torch.randn(batch, source_len, size, generator=generator, dtype=torch.float64)
        lengths_tensor = torch.tensor(lengths)
        for index, length in enumerate(lengths):
            outputs[index, length:] = 0.0  # like the encoder's outputs at padded positions
        result = checker.call(candidate, state.clone(), outputs.clone(), lengths_tensor.clone(), case=case)
        if result is None:
            continue
        if not isinstance(result, tuple) or len(result) != 2:
            checker.expect(False, f"{case}: expected a pair (context, weights), got {type(result).__name__}")
            continue
        context, weights = result
        expected_context, expected_weights = _reference_attention_step(state, outputs, lengths_tensor)
        shaped = isinstance(weights, torch.Tensor) and tuple(weights.shape) == (batch, source_len)
        if shaped and weights.is_floating_point():
            weights = weights.detach().double()
            padded = torch.arange(source_len) >= lengths_tensor[:, None]
            if padded.any() and not torch.isnan(weights).any() and weights[padded].abs().max() > 1e-6:
                checker.expect(False, f"{case}: padded source positions get weight up to "
                               f"{weights[padded].abs().max().item():.3g}; they must get exactly 0 "
                               f"(mask the positions j >= length before the softmax)")
                continue
            sums = weights.sum(-1)
            if not torch.isnan(weights).any() and not torch.allclose(sums, torch.ones_like(sums)):
                checker.expect(False, f"{case}: the weights of a source do not sum to 1 (got "
                               f"{[round(v, 3) for v in sums.tolist()]}); take the softmax over the source positions")
                continue
        if not checker.close(weights, expected_weights, f"{case}: weights"):
            continue
        checker.close(context, expected_context, f"{case}: context")
    return checker.report()
# --- Chapter 2: HAN's attention layer (context vector as the query) ---


def _reference_han_attention(
    values: torch.Tensor, padding_mask: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, context: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    keys = torch.tanh(values @ weight.T + bias)
    scores = (keys @ context).masked_fill(padding_mask, torch.finfo(values.dtype).min)
    weights = torch.softmax(scores, dim=-1).masked_fill(padding_mask, 0.0)
    return (weights.unsqueeze(-1) * values).sum(dim=-2), weights


def han_attention(candidate: Callable[..., Any]) -> bool:
    """Check ``candidate(values, padding_mask, weight, bias, context) -> (pooled, weights)``.

    ``values`` ``(batch, length, d)`` are the GRU states h_i, ``padding_mask`` ``(batch, length)`` is True
    at padding, ``weight`` ``(a, d)`` and ``bias`` ``(a,)`` make the keys u_i = tanh(W h_i + b), and
    ``context`` ``(a,)`` is the query u. Expected: weights ``(batch, length)`` = masked softmax of
    u_i . u (zeros on padding and on fully padded rows), pooled ``(batch, d)`` = sum_i weights_i h_i.
    """
    checker = Checker("han_attention")
    generator = torch.Generator().manual_seed(2)
    cases = [
        ("no padding", [5, 5, 5]),
        ("sentences of different lengths", [5, 3, 1]),
        ("a fully padded row (a padded sentence)", [4, 0, 2]),
    ]
    for case, lengths in cases:
        batch, length, size, attention_size = len(lengths), max(lengths), 6, 4
        values = torch.randn(batch, length, size, generator=generator, dtype=torch.float64)
        padding_mask = torch.arange(length) >= torch.tensor(lengths)[:, None]
        values = values.masked_fill(padding_mask.unsqueeze(-1), 0.0)
        weight = torch.randn(attention_size, size, generator=generator, dtype=torch.float64)
        bias = torch.randn(attention_size, generator=generator, dtype=torch.float64)
        context = 2 * torch.randn(attention_size, generator=generator, dtype=torch.float64)
        arguments = (values, padding_mask, weight, bias, context)
        problems_before = len(checker.problems)
        result = checker.call(candidate, *(a.clone() for a in arguments), case=case)
        if result is None:
            if len(checker.problems) == problems_before:  # it returned None rather than raising
                checker.expect(False, f"{case}: returned None; return the pair (pooled, weights)")
            continue
        if not isinstance(result, tuple) or len(result) != 2:
            checker.expect(False, f"{case}: expected a pair (pooled, weights), got {type(result).__name__}")
            continue
        pooled, weights = result
        expected_pooled, expected_weights = _reference_han_attention(*arguments)
        if (
            isinstance(weights, torch.Tensor)
            and tuple(weights.shape) == (batch, length)
            and weights.is_floating_point()
        ):
            weights = weights.detach().double()
            if torch.isnan(weights).any():
                checker.expect(
                    False,
                    f"{case}: the weights contain NaN; a fully padded row must get zeros "
                    f"(mask with a large negative number, or zero the row after the softmax)",
                )
                continue
            if padding_mask.any() and weights[padding_mask].abs().max() > 1e-6:
                checker.expect(
                    False,
                    f"{case}: padded positions get weight up to "
                    f"{weights[padding_mask].abs().max().item():.3g}; they must get exactly 0",
                )
                continue
            sums = weights.sum(-1)
            real = torch.tensor(lengths) > 0
            if not torch.allclose(sums[real], torch.ones_like(sums[real])):
                checker.expect(
                    False,
                    f"{case}: the weights of a row do not sum to 1 (got "
                    f"{[round(v, 3) for v in sums.tolist()]}); take the softmax over the positions",
                )
                continue
            scores_without_tanh = ((values @ weight.T + bias) @ context).masked_fill(padding_mask, -1e30)
            without_tanh = torch.softmax(scores_without_tanh, -1).masked_fill(padding_mask, 0.0)
            wrong = not torch.allclose(weights, expected_weights, atol=1e-5)
            if wrong and torch.allclose(weights, without_tanh, atol=1e-5):
                checker.expect(
                    False, f"{case}: the weights match keys without the tanh; the keys are u_i = tanh(W h_i + b)"
                )
                continue
        if not checker.close(weights, expected_weights, f"{case}: weights"):
            continue
        checker.close(pooled, expected_pooled, f"{case}: pooled (the weighted sum of the values h_i, not of the keys)")
    return checker.report()


# --- Chapter 6: the warm-up schedule and label smoothing ---


def _noam_reference(step: int, d_model: int, warmup_steps: int) -> float:
    return d_model**-0.5 * min(step**-0.5, step * warmup_steps**-1.5)


def noam_schedule(candidate: Callable[[int, int, int], float]) -> bool:
    """Check ``candidate(step, d_model, warmup_steps)``: the learning rate of the paper at ``step`` (>= 1).

    ``lrate = d_model^-0.5 · min(step^-0.5, step · warmup_steps^-1.5)``.
    """
    checker = Checker("noam_schedule")
    for d_model, warmup in ((512, 4000), (64, 100)):
        steps = [1, warmup // 2, warmup - 1, warmup, warmup + 1, 4 * warmup, 25 * warmup]
        case = f"d_model={d_model}, warmup_steps={warmup}"
        values = []
        for step in steps:
            value = checker.call(candidate, step, d_model, warmup, case=f"{case}, step={step}")
            if value is None:
                break
            if isinstance(value, torch.Tensor) and value.numel() == 1:
                value = value.item()
            if not isinstance(value, int | float) or isinstance(value, bool):
                checker.expect(False, f"{case}, step={step}: expected a number, got {type(value).__name__}")
                break
            values.append(float(value))
        if len(values) != len(steps):
            continue
        expected = [_noam_reference(step, d_model, warmup) for step in steps]
        if all(abs(v - e) <= 1e-9 + 1e-6 * e for v, e in zip(values, expected, strict=True)):
            continue
        ratios = [v / e for v, e in zip(values, expected, strict=True)]
        peak = steps[max(range(len(values)), key=values.__getitem__)]
        if max(ratios) - min(ratios) < 1e-6 * abs(ratios[0]):
            if abs(ratios[0] - d_model**0.5) < 1e-6 * d_model**0.5:
                message = "the factor d_model^-0.5 is missing"
            else:
                message = f"every value is {ratios[0]:.4g} times the expected one: check the constant factor"
            checker.expect(False, f"{case}: {message}")
        elif peak != warmup:
            checker.expect(
                False,
                f"{case}: the rate is largest at step {peak} of {steps}; it must rise linearly until "
                "warmup_steps, peak there, then decay as step^-0.5 (use min of the two terms, not max)",
            )
        else:
            step, value, want = next(
                (s, v, e) for s, v, e in zip(steps, values, expected, strict=True) if abs(v - e) > 1e-9 + 1e-6 * e
            )
            checker.expect(False, f"{case}: at step {step} expected {want:.6g}, got {value:.6g}")
    return checker.report()


def label_smoothed_cross_entropy(
    candidate: Callable[[torch.Tensor, torch.Tensor, float, int], torch.Tensor],
) -> bool:
    """Check ``candidate(logits, targets, smoothing, pad_id)``: label-smoothed cross-entropy, as torch computes it.

    ``logits`` ``(N, V)``, ``targets`` ``(N,)``. The target distribution is ``q = (1 - ε)·one_hot + ε / V``
    (the smoothing spread over all V classes); the loss is ``-Σ_k q_k log softmax(logits)_k``, averaged over
    the positions whose target is not ``pad_id``. It must equal
    ``F.cross_entropy(logits, targets, ignore_index=pad_id, label_smoothing=ε)``.
    """
    checker = Checker("label_smoothed_cross_entropy")
    generator = torch.Generator().manual_seed(6)
    cases = [(8, 6, 0.1, 0, 2), (5, 4, 0.3, 0, 0), (7, 5, 0.0, 0, 2), (6, 9, 0.2, 3, 1)]
    for rows, vocab, smoothing, pad_id, num_pads in cases:
        logits = torch.randn(rows, vocab, generator=generator) * 2
        targets = torch.randint(0, vocab, (rows,), generator=generator)
        targets[targets == pad_id] = (pad_id + 1) % vocab
        targets[rows - num_pads:] = pad_id
        case = f"{rows} positions ({num_pads} padded), vocabulary {vocab}, smoothing={smoothing}, pad_id={pad_id}"
        expected = torch.nn.functional.cross_entropy(logits, targets, ignore_index=pad_id, label_smoothing=smoothing)
        actual = checker.call(candidate, logits.clone(), targets.clone(), smoothing, pad_id, case=case)
        if actual is None:
            continue
        if isinstance(actual, torch.Tensor) and actual.dim() > 0 and actual.numel() > 1:
            checker.expect(False, f"{case}: expected one number (a 0-d tensor), got shape {tuple(actual.shape)}; "
                                  "average over the non-pad positions")
            continue
        if isinstance(actual, torch.Tensor) and actual.dim() > 0:
            actual = actual.reshape(())
        if isinstance(actual, torch.Tensor) and actual.shape == expected.shape and not torch.isnan(actual).any():
            log_probs = logits.log_softmax(-1)
            keep = targets != pad_id
            one_hot = torch.nn.functional.one_hot(targets, vocab).float()
            per_position = -(((1 - smoothing) * one_hot + smoothing / vocab) * log_probs).sum(-1)
            other_classes = (1 - smoothing) * one_hot + smoothing / max(vocab - 1, 1) * (1 - one_hot)
            wrong_answers = [
                (per_position.mean(), "the padded positions are counted: leave out positions whose target is pad_id"),
                (per_position[keep].sum(), "summed over the positions: take the mean over the non-pad ones"),
                (torch.nn.functional.nll_loss(log_probs[keep], targets[keep]),
                 "no smoothing: mix (1 - ε) of the one-hot target with ε spread uniformly over the vocabulary"),
                (-(other_classes * log_probs).sum(-1)[keep].mean(),
                 "ε is spread over the V - 1 other classes; torch spreads it over all V: q = (1-ε)·onehot + ε/V"),
                (-(((1 - smoothing) * one_hot + smoothing / vocab) * logits).sum(-1)[keep].mean(),
                 "used the logits instead of the log-probabilities: apply log_softmax first"),
            ]
            found = False
            for wrong, message in wrong_answers:
                if not torch.allclose(wrong, expected, atol=1e-6) and torch.allclose(actual.detach().float(), wrong,
                                                                                        atol=1e-5):
                    checker.expect(False, f"{case}: {message}")
                    found = True
                    break
            if found:
                continue
        checker.close(actual, expected, case)
    return checker.report()


# --- Chapter 7: BERT's masking rule (80/10/10) ---


def mlm_mask(candidate: Callable[..., Any]) -> bool:
    """Check ``candidate(input_ids, special_mask, mask_id, vocab_size) -> (corrupted_ids, labels)``.

    The rule: each non-special token is chosen with probability 0.15; a chosen token becomes
    ``mask_id`` 80% of the time, a uniformly random id in ``range(vocab_size)`` 10% of the time, and
    stays as it is 10% of the time. ``labels`` hold the original id at chosen positions, -100 elsewhere.
    The checker seeds ``torch`` itself and measures the proportions on 100,000 tokens.
    """
    checker = Checker("mlm_mask")
    mask_id, vocab_size = 4, 500
    torch.manual_seed(0)
    ids = torch.randint(5, vocab_size, (200, 500))
    special = torch.zeros_like(ids, dtype=torch.bool)
    special[:, 0] = True  # [CLS]
    special[:, -50:] = True  # [SEP] and padding
    original = ids.clone()
    result = checker.call(candidate, ids, special, mask_id, vocab_size, case="200 sequences of 500 tokens")
    if result is None:
        return checker.report()
    if not (isinstance(result, tuple | list) and len(result) == 2):
        checker.expect(False, f"expected a pair (corrupted_ids, labels), got {type(result).__name__}")
        return checker.report()
    corrupted, labels = result
    for name, tensor in (("corrupted_ids", corrupted), ("labels", labels)):
        if not isinstance(tensor, torch.Tensor):
            checker.expect(False, f"{name}: expected a torch.Tensor, got {type(tensor).__name__}")
            return checker.report()
        if tuple(tensor.shape) != tuple(ids.shape):
            checker.expect(False, f"{name}: expected shape {tuple(ids.shape)}, got {tuple(tensor.shape)}")
            return checker.report()
        if tensor.dtype != torch.long:
            checker.expect(False, f"{name}: expected dtype torch.long, got {tensor.dtype}")
            return checker.report()
    if not checker.expect(torch.equal(ids, original), "the input_ids were modified in place: work on a copy (clone)"):
        ids = original
    chosen = labels != -100
    checker.expect(not chosen[special].any() and torch.equal(corrupted[special], ids[special]),
                   "special positions ([CLS], [SEP], padding) were chosen or changed: leave them alone")
    checker.expect(torch.equal(labels[chosen], ids[chosen]),
                   "labels must hold the ORIGINAL token at chosen positions (not the [MASK] or random id)")
    checker.expect(torch.equal(corrupted[~chosen], ids[~chosen]),
                   "tokens with label -100 were changed: label every chosen token (masked, randomised or "
                   "kept) with its original id, and leave the others unchanged")
    if checker.problems:
        return checker.report()
    rate = chosen.float().sum().item() / (~special).sum().item()
    n = max(int(chosen.sum()), 1)
    masked = (corrupted[chosen] == mask_id).float().sum().item() / n
    kept = (corrupted[chosen] == ids[chosen]).float().sum().item() / n
    randomised = 1.0 - masked - kept
    if abs(rate - 0.15 * 0.8) < 0.01 and masked > 0.97:
        checker.expect(False, f"only {rate:.3f} of the tokens carry a label, all of them [MASK]: choose 15%, then "
                              "label every chosen token, also those replaced by a random id or left unchanged")
    elif masked > 0.97:
        checker.expect(False, "every chosen token became [MASK]: only 80% should; 10% get a random id, 10% stay")
    else:
        checker.expect(abs(rate - 0.15) < 0.01, f"{rate:.3f} of the non-special tokens were chosen, expected 0.15")
        checker.expect(abs(masked - 0.8) < 0.03, f"{masked:.3f} of the chosen tokens became [MASK], expected 0.8")
        checker.expect(abs(randomised - 0.1) < 0.025,
                       f"{randomised:.3f} of the chosen tokens got a random id, expected 0.1")
        checker.expect(abs(kept - 0.1) < 0.025, f"{kept:.3f} of the chosen tokens stayed unchanged, expected 0.1")
    replaced = corrupted[chosen & (corrupted != mask_id) & (corrupted != ids)]
    checker.expect(replaced.numel() == 0 or replaced.unique().numel() > 100,
                   "the random replacements are not spread over the vocabulary: draw them uniformly")
    again = checker.call(candidate, ids[:20], special[:20], mask_id, vocab_size, case="a second call")
    if again is not None:
        checker.expect(not torch.equal(again[1], labels[:20]),
                       "two calls chose the same positions: draw fresh random numbers on every call")
    return checker.report()
