"""The checkers of chapter 6: one cross-attention step, one beam-search step, a pre-LN encoder
layer, the Transformer's masks, a decoder layer's forward, beam search's length penalty and the
warm-up schedule."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import torch

from attention_to_bert.checks.checker import Checker, close, vary


def cross_attention(candidate: Callable[..., Any]) -> bool:
    """Check ``candidate(a, memory, memory_key_padding_mask, w_q, w_k, w_v)``: one head of the
    decoder's cross-attention, returning ``(output, weights)`` of shapes (batch, tgt, d_v) and
    (batch, tgt, src); True in the mask marks a padded source position."""
    checker = Checker("cross_attention")
    generator = torch.Generator().manual_seed(6)
    # (batch, target length, source length, d_model, d_k, d_v, real source lengths)
    for batch, tgt, src, d_model, d_k, d_v, lengths in [
        (2, 3, 5, 8, 4, 6, (5, 3)),
        (1, 4, 2, 6, 6, 3, (1,)),
        (3, 6, 4, 8, 2, 5, (4, 1, 2)),
        (2, 4, 4, 6, 3, 3, (4, 2)),  # as many targets as sources: a mask on the wrong side runs
    ]:
        tgt, d_model, d_k, d_v = vary(tgt, d_model, d_k, d_v)
        case = f"a {(batch, tgt, d_model)}, memory {(batch, src, d_model)}, d_k={d_k}, d_v={d_v}"
        inputs = {
            "a": torch.randn(batch, tgt, d_model, generator=generator),
            "memory": torch.randn(batch, src, d_model, generator=generator),
            "memory_key_padding_mask": torch.arange(src)[None, :] >= torch.tensor(lengths)[:, None],
            "w_q": torch.randn(d_model, d_k, generator=generator),
            "w_k": torch.randn(d_model, d_k, generator=generator),
            "w_v": torch.randn(d_model, d_v, generator=generator),
        }
        a, memory, padded = inputs["a"], inputs["memory"], inputs["memory_key_padding_mask"]
        q, k, v = a @ inputs["w_q"], memory @ inputs["w_k"], memory @ inputs["w_v"]
        blocked = padded[:, None, :]  # (batch, 1, src): the same keys are blocked for every query

        def weights_of(scores: torch.Tensor, mask: torch.Tensor = blocked) -> torch.Tensor:
            return scores.masked_fill(mask, float("-inf")).softmax(dim=-1)

        scores = q @ k.transpose(1, 2)
        weights = weights_of(scores / math.sqrt(d_k))
        weight_mistakes = [
            (weights_of(scores), "the scores are not divided by sqrt(d_k)"),
            (
                (scores / math.sqrt(d_k)).masked_fill(blocked, -1e9).softmax(dim=1),
                "the softmax runs over the queries (dim 1): take it over the keys (dim -1)",
            ),
            (
                (scores / math.sqrt(d_k)).masked_fill(blocked, float("-inf")).softmax(dim=1),
                "the softmax runs over the queries (dim 1): take it over the keys (dim -1)",
            ),
            (
                weights_of(scores / math.sqrt(d_model)),
                "the scores are divided by sqrt(d_model); divide by sqrt(d_k), the keys' width",
            ),
        ]
        if tgt == src:
            weight_mistakes.append(
                (
                    weights_of(scores / math.sqrt(d_k), padded[:, :, None]),
                    f"the mask blocks queries (rows), not keys: {WRONG_SIDE}",
                )
            )
        passed = [value.clone() for value in inputs.values()]
        result = checker.call(
            _naming_a_wrong_side_mask(candidate), *passed, case=case, pair="(output, weights)"
        )
        if result is None:
            continue
        output, actual_weights = result
        swapped = (batch, src, tgt)
        shape = tuple(actual_weights.shape) if isinstance(actual_weights, torch.Tensor) else None
        if src != tgt and shape == swapped:
            checker.expect(
                False,
                f"{case}: weights of shape (batch, src, tgt) = {swapped}: the queries must come "
                "from the decoder (a), the keys and values from the memory",
            )
            continue
        # a named mistake first: the masked-weights diagnosis would hide it
        named = [
            (wrong, text)
            for wrong, text in weight_mistakes
            if close(actual_weights, wrong, equal_nan=True) and not close(wrong, weights)
        ]
        if named:
            checker.expect(False, f"{case}, weights: {named[0][1]}")
            continue
        if checker.compare(
            actual_weights, weights, f"{case}, weights", named, masked=None if named else blocked
        ):
            output_mistakes = [
                (
                    weights @ memory,
                    "the output mixes the memory itself: mix the values memory @ w_v",
                ),
                (weights @ k, "the output mixes the keys: mix the values memory @ w_v"),
            ]
            checker.compare(output, weights @ v, f"{case}, output", output_mistakes)
    return checker.report()


WRONG_SIDE = (
    "memory_key_padding_mask (batch, src) marks padded keys; [:, None, :] makes it (batch, 1, src) "
    "so that it blocks columns of the (batch, tgt, src) scores"
)


def _naming_a_wrong_side_mask(candidate: Callable[..., Any]) -> Callable[..., Any]:
    """``candidate``, whose broadcasting error from a mask on the wrong side names the mistake."""

    @functools.wraps(candidate)
    def named(*args: Any) -> Any:
        try:
            return candidate(*args)
        except RuntimeError as error:
            if "must match the size" not in str(error):
                raise
            raise RuntimeError(f"{error}. Is the mask on the wrong side? {WRONG_SIDE}") from None

    return named


def _triple(result: Any) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor] | str:
    """The student's (scores, beam ids, token ids), or a message saying why they are not."""
    if not (isinstance(result, tuple | list) and len(result) == 3):
        return f"expected a triple (scores, beam_ids, token_ids), got {type(result).__name__}"
    if not all(isinstance(part, torch.Tensor) for part in result):
        names = ", ".join(type(part).__name__ for part in result)
        return f"expected three torch.Tensors, got ({names})"
    return result[0], result[1], result[2]


def _same(actual: tuple, expected: tuple) -> bool:
    scores, beams, tokens = actual
    want_scores, want_beams, want_tokens = expected
    return (
        scores.shape == want_scores.shape
        and torch.allclose(scores.double(), want_scores.double(), atol=1e-5)
        and beams.tolist() == want_beams.tolist()
        and tokens.tolist() == want_tokens.tolist()
    )


def _best(totals: torch.Tensor, k: int, largest: bool = True) -> tuple:
    """The k best (or worst) entries of a (beams, vocab) table: (values, beam ids, token ids)."""
    values, index = totals.flatten().topk(k, largest=largest)
    vocab = totals.shape[-1]
    return values, index // vocab, index % vocab


def beam_step(candidate: Callable[..., Any]) -> bool:
    """Check ``candidate(scores, log_probs, beam_size)``: the ``beam_size`` best of all
    ``beams × vocab`` extensions, best first, as ``(scores, beam_ids, token_ids)``."""
    checker = Checker("beam_step")
    generator = torch.Generator().manual_seed(60)
    for beams, vocab, beam_size in [(1, 6, 3), (3, 5, 3), (4, 7, 2), (2, 4, 5)]:
        beams, vocab = vary(beams, vocab)
        case = f"{beams} beam(s), vocabulary {vocab}, beam_size={beam_size}"
        scores = -torch.rand(beams, generator=generator) * 3
        log_probs = torch.randn(beams, vocab, generator=generator).mul(2).log_softmax(dim=-1)

        totals = scores[:, None] + log_probs
        expected = _best(totals, beam_size)
        values, index = totals.flatten().topk(beam_size)
        swapped = (values, index % vocab, index // vocab)
        wrong_tables = [  # (table, largest, message)
            (log_probs, True, "the prefix's score is not added: rank scores[b] + log_probs[b, t]"),
            (
                scores[:, None] * log_probs,
                True,
                "log-probabilities add: scores[:, None] + log_probs",
            ),
            (totals, False, "these are the worst candidates: keep the largest"),
        ]
        mistakes = [(_best(table, beam_size, top), text) for table, top, text in wrong_tables]
        mistakes.append(
            (swapped, "beam and token swapped: beam = index // vocab, token = index % vocab")
        )
        result = checker.call(candidate, scores.clone(), log_probs.clone(), beam_size, case=case)
        if result is None:
            continue
        actual = _triple(result)
        if isinstance(actual, str):
            checker.expect(False, f"{case}: {actual}")
            continue
        if _same(actual, expected):
            continue
        message = next((text for wrong, text in mistakes if _same(actual, wrong)), None)
        if message is None and tuple(actual[0].shape) == (beams, beam_size) and beams > 1:
            message = (
                "each beam's tokens were ranked on their own (shape (beams, beam_size)): flatten "
                "the beams × vocab candidates and take one topk"
            )
        if message is None and actual[0].shape == expected[0].shape:
            order = actual[0].argsort(descending=True)
            if _same(tuple(part[order] for part in actual), expected):
                message = "the right candidates, but not best first (topk sorts them)"
        shapes = [tuple(part.shape) for part in actual]
        wanted = [tuple(part.shape) for part in expected]
        if message is None and shapes != wanted:
            message = (
                f"expected (scores, beam_ids, token_ids) of shapes {wanted}, got {shapes}: "
                "return 1-D tensors of beam_size entries"
            )
        if message is None:
            message = (
                f"expected scores {[round(s, 4) for s in expected[0].tolist()]}, beams "
                f"{expected[1].tolist()}, tokens {expected[2].tolist()}; got scores "
                f"{[round(s, 4) for s in actual[0].double().flatten().tolist()]}, beams "
                f"{actual[1].flatten().tolist()}, tokens {actual[2].flatten().tolist()}"
            )
        checker.expect(False, f"{case}: {message}")
    return checker.report()


def _pre_ln_variants(layer: Any, x: torch.Tensor, mask: torch.Tensor | None) -> dict[str, Any]:
    """The right pre-LN output of ``layer`` (an ``EncoderLayer`` with the twin's weights) and the
    outputs of typical wrong orders, each by hand from the layer's own submodules."""

    def attend(h: torch.Tensor) -> torch.Tensor:
        return layer.self_attn(h, h, h, attn_mask=mask)[0]

    h = layer.norm1(x)
    z = x + attend(h)
    right = z + layer.feed_forward(layer.norm2(z))
    z_normed = h + attend(h)
    h_normed = layer.norm2(z_normed)
    one_norm = x + attend(h)
    return {
        "right": right,
        "post-LN, the paper's order: normalise x + Sublayer(x) after the addition; pre-LN "
        "normalises the sub-layer's input instead: x + Sublayer(LayerNorm(x))": layer(x, mask)[0],
        "the residual adds the normalised input: add Sublayer(LayerNorm(x)) to x itself": (
            h_normed + layer.feed_forward(h_normed)
        ),
        "the feed-forward's input is normalised with norm1: each sub-layer has its own LayerNorm "
        "(norm1 before attention, norm2 before the feed-forward)": (
            one_norm + layer.feed_forward(layer.norm1(one_norm))
        ),
        "a LayerNorm after the last addition too: torch's pre-LN layer ends with the residual sum "
        "(the stack's final LayerNorm does the rest)": layer.norm2(right),
    }


def pre_ln_encoder_layer(candidate: Callable[..., Any]) -> bool:
    """Check ``candidate``, a class built like ``EncoderLayer(d_model, num_heads, d_ff)`` (the
    same submodules) whose ``forward(x, mask)`` returns ``(y, weights)`` in the pre-LN order,
    against ``nn.TransformerEncoderLayer(norm_first=True)`` with the same weights."""
    from torch import nn

    from attention_to_bert.multihead import copy_torch_weights
    from attention_to_bert.transformer import EncoderLayer

    checker = Checker("pre_ln_encoder_layer")
    generator = torch.Generator().manual_seed(61)
    # (batch, length, heads, width per head, d_ff, real lengths; None: no mask)
    for batch, length, heads, head_width, d_ff, lengths in [
        (2, 5, 2, 4, 16, (5, 3)),
        (1, 4, 1, 6, 12, None),
        (3, 6, 4, 2, 20, (6, 2, 4)),
    ]:
        length, head_width, d_ff = vary(length, head_width, d_ff)
        d_model = heads * head_width
        case = f"d_model={d_model}, num_heads={heads}, d_ff={d_ff}, x {(batch, length, d_model)}"
        torch_state = torch.random.get_rng_state()
        torch.manual_seed(int(torch.randint(0, 2**31, (1,), generator=generator)))
        twin = nn.TransformerEncoderLayer(
            d_model, heads, d_ff, dropout=0.0, batch_first=True, norm_first=True
        ).eval()
        torch.random.set_rng_state(torch_state)
        with torch.no_grad():  # LayerNorms that differ from each other and from a fresh one
            for norm in (twin.norm1, twin.norm2):
                norm.weight.copy_(1 + 0.5 * torch.randn(d_model, generator=generator))
                norm.bias.copy_(0.5 * torch.randn(d_model, generator=generator))
        x = torch.randn(batch, length, d_model, generator=generator)
        mask = None
        if lengths is not None:
            lengths = tuple(min(n, length) for n in lengths)
            padded = torch.arange(length)[None, :] >= torch.tensor(lengths)[:, None]
            mask = padded[:, None, None, :]  # True = may not attend, over (batch, heads, n, n)
        built = checker.call(candidate, d_model, heads, d_ff, case=f"{case}, building the layer")
        if built is None:
            continue
        checker.cases -= 1  # building and running the layer make one test case
        try:
            layer = copy_torch_weights(built, twin).eval()
        except Exception as error:  # the student's class: report, don't crash
            checker.expect(
                False,
                f"{case}: could not give candidate({d_model}, {heads}, {d_ff}) the weights of "
                "nn.TransformerEncoderLayer (keep EncoderLayer's submodules: subclass it and "
                f"write forward only): {type(error).__name__}: {error}",
            )
            continue
        reference = copy_torch_weights(EncoderLayer(d_model, heads, d_ff), twin).eval()
        with torch.no_grad():
            variants = _pre_ln_variants(reference, x, mask)
            result = checker.call(layer, x.clone(), mask, case=case, pair="(y, weights)")
        if result is None:
            continue
        expected = variants.pop("right")
        mistakes = [(wrong, text) for text, wrong in variants.items()]
        checker.compare(result[0], expected, f"{case}, y", mistakes, atol=1e-4)
    return checker.report()


def _masks_of(src_ids: torch.Tensor, tgt_in_ids: torch.Tensor, pad_id: int) -> dict[str, Any]:
    """The right (decoder self-attention, source) masks and the usual wrong ones, each a pair of
    (batch, 1, tgt_len, tgt_len) and (batch, 1, 1, src_len) boolean masks, True = may not attend."""
    length = tgt_in_ids.shape[1]
    later = torch.ones(length, length, dtype=torch.bool).triu(diagonal=1)
    target_pad = (tgt_in_ids == pad_id)[:, None, None, :]
    source = (src_ids == pad_id)[:, None, None, :]
    right = (later | target_pad, source)
    rows = (tgt_in_ids == pad_id)[:, None, :, None]
    return {
        "right": right,
        "True where a query MAY attend: the book's masks are True where it may NOT (negate them)": (
            ~right[0],
            ~right[1],
        ),
        "no causal part: position i can see the target tokens after it": (
            target_pad.expand(-1, 1, length, -1),
            source,
        ),
        "a position may not see itself: the causal part is triu(diagonal=1), not triu(0)": (
            torch.ones(length, length, dtype=torch.bool).triu() | target_pad,
            source,
        ),
        "the target's <pad> keys are not masked (or only the causal part is returned)": (
            later.expand(len(tgt_in_ids), 1, -1, -1),
            source,
        ),
        "padding masked as queries (rows), not as keys (columns): [:, None, None, :]": (
            later | rows,
            source,
        ),
        "the source's <pad> keys are not masked": (
            right[0],
            torch.zeros_like(source),
        ),
    }


def _as_mask(mask: Any, shape: tuple[int, ...]) -> torch.Tensor | str:
    """``mask`` broadcast to ``shape`` (batch, 1 or heads, queries, keys), or why it cannot be."""
    if not isinstance(mask, torch.Tensor):
        return f"expected a tensor, got {type(mask).__name__}"
    if mask.dtype != torch.bool:
        return f"expected a boolean mask (True = may not attend), got dtype {mask.dtype}"
    if mask.dim() != 4:
        return f"expected 4 axes (batch, heads, queries, keys), got shape {tuple(mask.shape)}"
    try:
        return mask.expand(shape)
    except RuntimeError:
        return (
            f"shape {tuple(mask.shape)} does not broadcast to (batch, 1, queries, keys) = {shape}"
        )


def _leaks(masks: tuple[torch.Tensor, torch.Tensor], src_ids, tgt_in_ids, pad_id: int) -> str:
    """Run a small decoder stack under ``masks``; '' if no output reads a later target token or a
    source ``<pad>``, else what leaked."""
    from attention_to_bert.transformer import Transformer

    generator = torch.Generator().manual_seed(61)
    torch_state = torch.random.get_rng_state()
    try:
        torch.manual_seed(61)
        stack = Transformer(8, 2, 1, 1, 16, dropout=0.0).double().eval()
    finally:
        torch.random.set_rng_state(torch_state)
    vocab = int(max(src_ids.max(), tgt_in_ids.max(), pad_id)) + 2
    table = torch.randn(vocab, 8, generator=generator, dtype=torch.float64)

    def outputs(src, tgt):
        memory = table[src]
        for layer in stack.encoder_layers:
            memory, _ = layer(memory, masks[1])
        t = table[tgt]
        for layer in stack.decoder_layers:
            t, _, _ = layer(t, memory, masks[0], masks[1])
        return t

    with torch.no_grad():
        base = outputs(src_ids, tgt_in_ids)
        later = tgt_in_ids.clone()
        later[:, -1] = (later[:, -1] + 1) % vocab
        changed = outputs(src_ids, later)
        if not torch.allclose(base[:, :-1], changed[:, :-1]):
            return "changing the last target token changed earlier positions' outputs"
        padded = src_ids.clone()
        padded[src_ids == pad_id] = (pad_id + 1) % vocab
        changed = outputs(padded, tgt_in_ids)
        real = tgt_in_ids != pad_id
        if not torch.allclose(base[real], changed[real]):
            return "changing the source's <pad> tokens changed the outputs"
    return ""


def transformer_masks(candidate: Callable[..., Any]) -> bool:
    """Check ``candidate(src_ids, tgt_in_ids, pad_id)``: the decoder's self-attention mask (causal
    and the target's padding, broadcastable to (batch, heads, tgt_len, tgt_len)) and the source's
    padding mask (broadcastable to (batch, heads, queries, src_len)), True = may not attend, and a
    leak test: under them no output reads a later target token or a source ``<pad>``."""
    checker = Checker("transformer_masks")
    generator = torch.Generator().manual_seed(62)
    for batch, src_len, tgt_len, pad_id in [(2, 5, 4, 0), (3, 6, 5, 1), (4, 3, 6, 2)]:
        batch, src_len, tgt_len = vary(batch, src_len, tgt_len)
        case = f"batch {batch}, source length {src_len}, target length {tgt_len}, pad_id {pad_id}"
        src = torch.randint(pad_id + 1, pad_id + 9, (batch, src_len), generator=generator)
        tgt = torch.randint(pad_id + 1, pad_id + 9, (batch, tgt_len), generator=generator)
        for row in range(1, batch):  # every row but the first padded at the end
            src[row, src_len - row % src_len or 1 :] = pad_id
            tgt[row, max(1, tgt_len - row) :] = pad_id
        result = checker.call(
            candidate,
            src.clone(),
            tgt.clone(),
            pad_id,
            case=case,
            pair="(decoder mask, source mask)",
        )
        if result is None:
            continue
        wanted = {
            "decoder mask": (batch, 1, tgt_len, tgt_len),
            "source mask": (batch, 1, 1, src_len),
        }
        actual = []
        for part, (name, shape) in zip(result, wanted.items(), strict=True):
            mask = _as_mask(part, shape)
            if isinstance(mask, str):
                checker.expect(False, f"{case}: the {name}: {mask}")
                break
            actual.append(mask)
        if len(actual) < 2:
            continue
        variants = _masks_of(src, tgt, pad_id)
        right = tuple(
            m.expand(s) for m, s in zip(variants.pop("right"), wanted.values(), strict=True)
        )
        if all(torch.equal(a, r) for a, r in zip(actual, right, strict=True)):
            leak = _leaks(tuple(actual), src, tgt, pad_id)
            checker.expect(not leak, f"{case}: leak test: {leak}")
            continue
        message = next(
            (
                text
                for text, masks in variants.items()
                if all(
                    torch.equal(a, m.expand(s))
                    for a, m, s in zip(actual, masks, wanted.values(), strict=True)
                )
            ),
            None,
        )
        if message is None:
            leak = _leaks(tuple(actual), src, tgt, pad_id)
            names = list(wanted)
            wrong = [
                n for n, a, r in zip(names, actual, right, strict=True) if not torch.equal(a, r)
            ]
            verb = (
                "differs from the expected one"
                if len(wrong) == 1
                else "differ from the expected ones"
            )
            message = f"the {' and the '.join(wrong)} {verb}" + (
                f"; leak test: {leak}" if leak else ""
            )
        checker.expect(False, f"{case}: {message}")
    return checker.report()


# --- decoder_layer (a decoder layer from section 6.3's formulas; for courses that set it) ---


def _decoder_variants(layer: Any, x: torch.Tensor, memory: torch.Tensor, self_mask, memory_mask):
    """The package layer's output and those of typical wrong forwards, each by hand from the
    layer's own submodules (``layer`` is a ``DecoderLayer`` in eval mode)."""

    def self_attend(h: torch.Tensor, mask: Any = self_mask) -> torch.Tensor:
        return layer.self_attn(h, h, h, attn_mask=mask)[0]

    def cross(a: torch.Tensor, keys: torch.Tensor, mask: Any = memory_mask) -> torch.Tensor:
        return layer.multihead_attn(a, keys, keys, attn_mask=mask)[0]

    def finish(b: torch.Tensor) -> torch.Tensor:
        return layer.norm3(b + layer.feed_forward(b))

    a = layer.norm1(x + self_attend(x))
    no_causal = layer.norm1(x + self_attend(x, None))
    h = layer.norm1(x)
    pre_a = x + layer.self_attn(h, h, h, attn_mask=self_mask)[0]
    pre_b = pre_a + cross(layer.norm2(pre_a), memory)
    return {
        "right": layer(x, memory, self_mask, memory_mask)[0],
        "the self-attention ignores self_mask: each position must not see later ones (the causal "
        "mask) nor the target's padding": finish(layer.norm2(no_causal + cross(no_causal, memory))),
        "the cross-attention ignores memory_mask: the source's padding must get no weight": finish(
            layer.norm2(a + cross(a, memory, None))
        ),
        "the residual of the cross-attention adds x, not a (the self-attention sub-layer's "
        "output): each Add takes the input of its own sub-layer": finish(
            layer.norm2(x + cross(a, memory))
        ),
        "pre-LN order: this layer is post-LN, LayerNorm(x + Sublayer(x)) after each addition": (
            pre_b + layer.feed_forward(layer.norm3(pre_b))
        ),
        "no feed-forward sub-layer: the third step is LayerNorm(b + FFN(b))": layer.norm3(
            layer.norm2(a + cross(a, memory))
        ),
    }


def decoder_layer(candidate: Callable[..., Any]) -> bool:
    """Check ``candidate``, a class built like ``DecoderLayer(d_model, num_heads, d_ff)`` (the same
    submodules) whose ``forward(x, memory, self_mask, memory_mask)`` returns ``(y, self_weights,
    cross_weights)``, against the package's ``DecoderLayer`` with the same weights."""
    from attention_to_bert.masks import causal_mask
    from attention_to_bert.transformer import DecoderLayer

    checker = Checker("decoder_layer")
    generator = torch.Generator().manual_seed(64)
    # (batch, target length, source length, heads, width per head, d_ff, real source lengths)
    for batch, m, n, heads, head_width, d_ff, lengths in [
        (2, 4, 6, 2, 4, 16, (6, 3)),
        (1, 5, 3, 1, 6, 12, (3,)),
        (3, 3, 5, 4, 2, 20, (5, 2, 4)),
    ]:
        m, n, head_width, d_ff = vary(m, n, head_width, d_ff)
        d_model = heads * head_width
        case = f"d_model={d_model}, num_heads={heads}, x {(batch, m, d_model)}, memory n={n}"
        torch_state = torch.random.get_rng_state()
        torch.manual_seed(int(torch.randint(0, 2**31, (1,), generator=generator)))
        reference = DecoderLayer(d_model, heads, d_ff).eval()
        with torch.no_grad():  # LayerNorms that differ from each other and from a fresh one
            for norm in (reference.norm1, reference.norm2, reference.norm3):
                norm.weight.copy_(1 + 0.5 * torch.randn(d_model, generator=generator))
                norm.bias.copy_(0.5 * torch.randn(d_model, generator=generator))
        built = checker.call(candidate, d_model, heads, d_ff, case=f"{case}, building the layer")
        torch.random.set_rng_state(torch_state)
        if built is None:
            continue
        try:
            built.load_state_dict(reference.state_dict())
        except Exception as error:  # the student's class: report, don't crash
            checker.expect(
                False,
                f"{case}: could not give candidate({d_model}, {heads}, {d_ff}) the weights of "
                "DecoderLayer (keep its submodules: subclass it and write forward only): "
                f"{type(error).__name__}: {error}",
            )
            continue
        x = torch.randn(batch, m, d_model, generator=generator)
        memory = torch.randn(batch, n, d_model, generator=generator)
        lengths = tuple(min(k, n) for k in lengths)
        padded = torch.arange(n)[None, :] >= torch.tensor(lengths)[:, None]
        self_mask = causal_mask(m)  # (m, m), True = may not attend
        memory_mask = padded[:, None, None, :]  # (batch, 1, 1, n)
        with torch.no_grad():
            variants = _decoder_variants(reference, x, memory, self_mask, memory_mask)
            self_weights = reference(x, memory, self_mask, memory_mask)[1]
            try:
                result = built.eval()(x.clone(), memory.clone(), self_mask, memory_mask)
            except Exception as error:  # the student's code may raise anything
                checker.expect(False, f"{case}: raised {type(error).__name__}: {error}")
                continue
        if result is None or not isinstance(result, tuple | list) or len(result) != 3:
            checker.expect(
                False,
                f"{case}: expected a triple (y, self_weights, cross_weights), got "
                f"{type(result).__name__} (a missing return, or a body still `...`?)",
            )
            continue
        expected = variants.pop("right")
        mistakes = [(wrong, text) for text, wrong in variants.items()]
        checker.compare(result[0], expected, f"{case}, y", mistakes, atol=1e-4)
        weights_case = f"{case}, self_weights"
        later = "later positions (the causal mask)"
        checker.compare(result[1], self_weights, weights_case, masked=self_mask, masked_name=later)
    return checker.report()


# --- length_penalty (Exercise 6.5) ---


def _rescored(hypotheses: list, alpha: float, penalty: Callable[[int], float]) -> list:
    """``hypotheses`` (ids, log p) as (ids, log p / penalty(len(ids))), best first."""
    scored = [(ids, log_p / penalty(len(ids))) for ids, log_p in hypotheses]
    return sorted(scored, key=lambda hypothesis: -hypothesis[1])


def _same_ranking(actual: Any, expected: list) -> bool:
    if not isinstance(actual, list | tuple) or len(actual) != len(expected):
        return False
    try:
        return all(
            list(ids) == list(want_ids) and abs(float(score) - want) < 1e-6
            for (ids, score), (want_ids, want) in zip(actual, expected, strict=True)
        )
    except (TypeError, ValueError):  # not pairs of (ids, score)
        return False


def length_penalty(candidate: Callable[..., Any]) -> bool:
    """Check ``candidate(hypotheses, alpha)``: finished beam-search hypotheses ``(ids, log p)``
    rescored with Wu et al.'s (2016) length penalty, ``log p / ((5 + |Y|) / 6) ** alpha`` with
    ``|Y| = len(ids)``, returned as a new list of ``(ids, score)``, best first."""
    import random

    checker = Checker("length_penalty")
    draw = random.Random(65)
    for count, alpha in [(4, 0.6), (3, 1.0), (5, 0.0), (6, 0.6)]:
        (count,) = vary(count)
        hypotheses = []
        for _ in range(count):
            length = draw.randint(1, 12)
            ids = [draw.randint(3, 14) for _ in range(length - 1)] + [2]  # ends in <eos>
            hypotheses.append((ids, -draw.uniform(0.2, 3.0) * length**0.5))
        case = f"{count} hypotheses, alpha={alpha}"

        def gnmt(length: int, alpha: float = alpha) -> float:
            return ((5 + length) / 6) ** alpha

        expected = _rescored(hypotheses, alpha, gnmt)
        by_length = _rescored(hypotheses, alpha, lambda n, a=alpha: n**a)
        multiplied = _rescored(hypotheses, alpha, lambda n, a=alpha: 1 / gnmt(n, a))
        without_eos = _rescored(hypotheses, alpha, lambda n, a=alpha: gnmt(n - 1, a))
        mistakes = [
            (by_length, "divide by Wu et al.'s ((5 + |Y|) / 6) ** alpha, not by |Y| ** alpha"),
            (multiplied, "divide log p by the penalty, do not multiply: longer must cost less"),
            (list(reversed(expected)), "these are worst first: sort by score, highest first"),
            (without_eos, "|Y| counts every token of ids, <eos> included"),
        ]
        copy = [(list(ids), log_p) for ids, log_p in hypotheses]
        result = checker.call(candidate, copy, alpha, case=case)
        if result is None:
            continue
        if _same_ranking(result, expected):
            continue
        message = next((text for wrong, text in mistakes if _same_ranking(result, wrong)), None)
        if message is None:
            want = [(ids, round(score, 4)) for ids, score in expected]
            message = f"expected {want}, got {result!r:.300}"
        checker.expect(False, f"{case}: {message}")
    return checker.report()


# --- warmup_schedule (Exercise 6.8) ---


def _rate(d_model: int, warmup: int, factor: float, step: int, **wrong: bool) -> float:
    """The schedule of Vaswani et al. (2017) at ``step`` (0 counts as 1), or a usual wrong form."""
    step = max(step, 1)
    grow = step * warmup ** (-0.5 if wrong.get("warmup_half") else -1.5)
    decay = step**-0.5
    chosen = max(grow, decay) if wrong.get("max") else min(grow, decay)
    scale = d_model ** (0.5 if wrong.get("d_model_up") else -0.5)
    return (1.0 if wrong.get("no_factor") else factor) * scale * chosen


def _same_rates(got: list[float], values: list[float]) -> bool:
    return all(
        math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-15) for a, b in zip(got, values, strict=True)
    )


def warmup_schedule(candidate: Callable[..., Any]) -> bool:
    """Check ``candidate(d_model, warmup_steps, factor)``: a function ``rate(step)`` giving
    ``factor · d_model^-0.5 · min(step^-0.5, step · warmup_steps^-1.5)``, with step 0 (``LambdaLR``'s
    first call) counted as step 1; the rate peaks at ``warmup_steps``."""
    checker = Checker("warmup_schedule")
    mistakes = {
        "max": "max where the formula has min: the rate must grow, then decay",
        "warmup_half": "warmup_steps ** -1.5, not -0.5: the two terms must meet at warmup_steps",
        "d_model_up": "d_model ** -0.5 (a wider model gets a smaller rate), not d_model ** 0.5",
        "no_factor": "the rate is multiplied by factor",
    }
    for d_model, warmup, factor in [(512, 4000, 1.0), (64, 50, 0.5), (32, 7, 2.0)]:
        (warmup,) = vary(warmup)
        case = f"d_model={d_model}, warmup_steps={warmup}, factor={factor}"
        rate = checker.call(candidate, d_model, warmup, factor, case=case)
        if rate is None:
            continue
        if not callable(rate):
            checker.expect(
                False, f"{case}: expected a function rate(step), got {type(rate).__name__}"
            )
            continue
        try:
            first = float(rate(0))
        except Exception as error:  # the student's code may raise anything
            checker.expect(
                False,
                f"{case}: rate(0) raised {type(error).__name__}: {error} (LambdaLR asks for "
                "step 0 first: count it as step 1)",
            )
            continue
        steps = [1, 2, warmup // 2 + 1, warmup - 1, warmup, warmup + 1, 3 * warmup, 20 * warmup]
        try:
            got = [first] + [float(rate(step)) for step in steps]
        except Exception as error:
            checker.expect(False, f"{case}: rate(step) raised {type(error).__name__}: {error}")
            continue

        points = [0, *steps]
        right = [_rate(d_model, warmup, factor, k) for k in points]
        wrong = {
            text: [_rate(d_model, warmup, factor, k, **{key: True}) for k in points]
            for key, text in mistakes.items()
        }
        wrong["rate(0) is 0: count step 0 as step 1 (LambdaLR)"] = [0.0, *right[1:]]
        if _same_rates(got, right):
            continue
        message = next((text for text, values in wrong.items() if _same_rates(got, values)), None)
        if message is None:
            want = [f"{value:.3g}" for value in right]
            message = f"at steps {points} expected {want}, got {[f'{v:.3g}' for v in got]}"
        checker.expect(False, f"{case}: {message}")
    return checker.report()
