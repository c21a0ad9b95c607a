"""The checkers of chapter 5: splitting into heads, the causal mask, a masked multi-head layer,
multi-head cross-attention with a mask per sequence, grouped-query attention, the size of a KV
cache and cached decoding through a stack."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import torch
from torch import nn

from attention_to_bert.checks.checker import Checker, close, vary


def split_heads(candidate: Callable[[torch.Tensor, int], torch.Tensor]) -> bool:
    """Check ``candidate(x, num_heads)``: (batch, seq, d_model) -> (batch, heads, seq, head_dim), a block per head."""
    checker = Checker("split_heads")
    generator = torch.Generator().manual_seed(5)
    for shape, heads in [((2, 5, 12), 3), ((1, 4, 8), 2), ((3, 6, 16), 4), ((2, 3, 8), 1)]:
        batch, seq, head_dim = vary(shape[0], shape[1], shape[2] // heads)
        d_model = head_dim * heads
        shape = (batch, seq, d_model)
        case = f"x of shape {shape}, num_heads={heads}"
        x = torch.randn(*shape, generator=generator)
        by_position = x.view(batch, seq, heads, head_dim)
        straight = x.reshape(batch, heads, seq, head_dim)
        strided = x.view(batch, seq, head_dim, heads).permute(0, 3, 1, 2)
        mistakes = [
            (by_position, "not transposed: swap the seq and heads axes (transpose(1, 2))"),
            (straight, "a direct reshape to (batch, heads, seq, head_dim) mixes up positions"),
            (strided, "each head took every heads-th feature, not head_dim consecutive ones"),
        ]
        actual = checker.call(candidate, x.clone(), heads, case=case)
        checker.compare(actual, by_position.transpose(1, 2), case, mistakes)
    return checker.report()


def causal_mask(candidate: Callable[[int], torch.Tensor]) -> bool:
    """Check ``candidate(size)``: a bool ``(size, size)`` mask, True where position i may not attend to j (j > i)."""
    checker = Checker("causal_mask")
    for size in vary(1, 4, 7):
        case = f"size={size} (True must mark j > i, above the diagonal)"
        expected = torch.ones(size, size, dtype=torch.bool).triu(diagonal=1)
        with_diagonal = torch.ones(size, size, dtype=torch.bool).triu()
        mistakes = [
            (~expected, "polarity inverted: True must mean 'may NOT attend', i.e. the future"),
            (with_diagonal, "the diagonal is masked too: a position may attend to itself"),
            (
                expected.T,
                "the past is masked instead of the future: query i may not see keys j > i",
            ),
        ]
        actual = checker.call(candidate, size, case=case)
        if isinstance(actual, torch.Tensor) and actual.dtype != torch.bool:
            message = "return a bool mask (True = may not attend), not an additive 0 / -inf one"
            checker.expect(False, f"{case}: dtype {actual.dtype}; {message}")
        else:
            if size == 1:  # a single position: only the diagonal, which must be False
                mistakes = [
                    (
                        ~expected,
                        "with size=1 the only entry, the diagonal, must be False: position 0 may "
                        "attend to itself (True would leave it nothing to attend to)",
                    )
                ]
            checker.compare(actual, expected, case, mistakes)
    return checker.report()


def _forward(q_in, k_in, v_in, params, heads, padding, attn, **wrong):
    """The layer in float64, or one typical mistake of it (the flags in ``wrong``)."""
    p = {name: t.double() for name, t in params.items()}
    if wrong.get("transposed"):
        p = {name: t.T if name.startswith("W") else t for name, t in p.items()}
    bias = not wrong.get("no_bias")
    batch, m, d_model = q_in.shape
    d_k = d_model // heads

    def project(x, name):  # (batch, len, d_model) -> (batch, heads, len, d_k)
        y = x.double() @ p[f"W_{name}"] + (p[f"b_{name}"] if bias else 0)
        if wrong.get("reshape"):
            return y.reshape(batch, heads, x.shape[1], d_k)
        return y.view(batch, x.shape[1], heads, d_k).transpose(1, 2)

    q, k, v = project(q_in, "q"), project(k_in, "k"), project(v_in, "v")
    scale = {"none": 1.0, "d_model": d_model**0.5}.get(wrong.get("scale", ""), d_k**0.5)
    scores = q @ k.transpose(-2, -1) / scale
    mask = torch.zeros(batch, 1, m, k.shape[2], dtype=torch.bool)
    if padding is not None and not wrong.get("no_padding"):
        on_rows = wrong.get("padding_on_rows") and m == padding.shape[1]
        part = padding[:, None, :, None] if on_rows else padding[:, None, None, :]
        mask = mask | (~part if wrong.get("inverted") else part)
    if attn is not None and not wrong.get("no_attn"):
        mask = mask | (~attn if wrong.get("inverted") else attn)
    weights = torch.softmax(scores.masked_fill(mask, float("-inf")), dim=wrong.get("dim", -1))
    heads_out = weights @ v
    if wrong.get("no_transpose_back"):
        merged = heads_out.reshape(batch, m, d_model)
    else:
        merged = heads_out.transpose(1, 2).reshape(batch, m, d_model)
    if wrong.get("no_out_proj"):
        return merged, weights
    return merged @ p["W_o"] + (p["b_o"] if bias else 0), weights


_MISTAKES = [
    ({"scale": "none"}, "the scores are not scaled: divide them by sqrt(d_k)"),
    (
        {"scale": "d_model"},
        "the scores are divided by sqrt(d_model); divide by sqrt(d_k) = sqrt(d_model // num_heads)",
    ),
    ({"inverted": True}, "mask polarity inverted: True means 'may NOT attend' (fill it with -inf)"),
    ({"no_padding": True}, "the key_padding_mask is not applied: padded keys get weight"),
    ({"no_attn": True}, "the attn_mask is not applied"),
    (
        {"padding_on_rows": True},
        "the key_padding_mask hides queries (rows); it must hide keys (columns): "
        "key_padding_mask[:, None, None, :]",
    ),
    ({"dim": -2}, "the softmax is taken over the queries; take it over the keys (dim=-1)"),
    (
        {"reshape": True},
        "heads split with a direct reshape to (batch, heads, len, d_k): split the last axis "
        "(view(batch, len, heads, d_k)), then transpose(1, 2)",
    ),
    (
        {"no_transpose_back": True},
        "heads concatenated without moving the head axis back: transpose(1, 2) before reshape",
    ),
    ({"no_out_proj": True}, "the output projection (@ W_o + b_o) is missing"),
    ({"no_bias": True}, "the biases b_q, b_k, b_v, b_o are missing"),
    (
        {"transposed": True},
        "the weights are used transposed: params hold W as section 5.2 writes it, use x @ W",
    ),
]


def _names_a_mistake(checker, case, output, expected, forward, mistakes) -> bool:
    """Report the first of ``mistakes`` (flags of ``forward``, message) whose output ``output``
    matches, skipping those that change nothing in this case; return whether one was named."""
    for flags, message in mistakes:
        wrong_output, _ = forward(**flags)
        if close(wrong_output, expected, equal_nan=True):  # this mistake changes nothing here
            continue
        if close(output, wrong_output, equal_nan=True):
            checker.expect(False, f"{case}: {message}")
            return True
    return False


def _mha_case(batch, m, n, d_model, heads, masks, generator):
    """Inputs, weights and torch's (output, weights) for one case of ``multi_head_attention``."""
    reference = nn.MultiheadAttention(d_model, heads, batch_first=True).eval()
    with torch.no_grad():
        for parameter in reference.parameters():
            parameter.copy_(torch.randn(parameter.shape, generator=generator) / d_model**0.5)
    W_q, W_k, W_v = reference.in_proj_weight.detach().chunk(3)
    b_q, b_k, b_v = reference.in_proj_bias.detach().chunk(3)
    params = {"W_q": W_q.T, "W_k": W_k.T, "W_v": W_v.T, "W_o": reference.out_proj.weight.T}
    params.update(b_q=b_q, b_k=b_k, b_v=b_v, b_o=reference.out_proj.bias)
    params = {name: t.detach().clone().contiguous() for name, t in params.items()}
    query = torch.randn(batch, m, d_model, generator=generator)
    key = (
        query if m == n and "self" in masks else torch.randn(batch, n, d_model, generator=generator)
    )
    value = key if "self" in masks else torch.randn(batch, n, d_model, generator=generator)
    padding = attn = None
    if "padding" in masks:  # every sequence keeps key 0, so no query is left with nothing
        lengths = torch.randint(1, n + 1, (batch,), generator=generator)
        lengths[0] = max(1, n - 2)
        padding = torch.arange(n) >= lengths[:, None]
    if "causal" in masks:
        attn = torch.ones(m, n, dtype=torch.bool).triu(diagonal=1)
    with torch.no_grad():
        output, weights = reference(
            query, key, value, key_padding_mask=padding, attn_mask=attn, average_attn_weights=False
        )
    return (query, key, value, params, padding, attn), (output, weights)


def multi_head_attention(candidate: Callable[..., tuple[torch.Tensor, torch.Tensor]]) -> bool:
    """Check ``candidate(query, key, value, params, num_heads, key_padding_mask, attn_mask)``
    -> ``(output, weights)`` against ``nn.MultiheadAttention``, naming typical mistakes."""
    checker = Checker("multi_head_attention")
    generator = torch.Generator().manual_seed(55)
    cases = [
        ((2, 5, 5, 16, 4), ("self",)),
        ((3, 4, 6, 24, 3), ("padding",)),
        ((2, 6, 6, 16, 2), ("self", "padding", "causal")),
        ((1, 3, 3, 8, 1), ("self", "causal")),
    ]
    for (batch, m, n, d_model, heads), masks in cases:
        batch, head_dim = vary(batch, d_model // heads)
        d_model = head_dim * heads
        case = f"batch {batch}, {m} queries, {n} keys, d_model {d_model}, {heads} head(s)"
        case += f" ({', '.join(masks)})"
        inputs, (expected, expected_weights) = _mha_case(
            batch, m, n, d_model, heads, masks, generator
        )
        query, key, value, params, padding, attn = inputs
        passed = [t.clone() for t in (query, key, value)]
        if "self" in masks:  # self-attention: one tensor, as a layer receives it
            passed = [passed[0]] * 3
        passed_params = {name: t.clone() for name, t in params.items()}
        passed_masks = [None if t is None else t.clone() for t in (padding, attn)]
        result = checker.call(
            candidate,
            *passed,
            passed_params,
            heads,
            *passed_masks,
            case=case,
            pair="(output, weights)",
        )
        if result is None:
            continue
        output, weights = result
        forward = partial(_forward, *inputs[:4], heads, padding, attn)
        if not _names_a_mistake(checker, case, output, expected, forward, _MISTAKES):
            mask = torch.zeros(batch, 1, m, n, dtype=torch.bool)
            if padding is not None:
                mask = mask | padding[:, None, None, :]
            if attn is not None:
                mask = mask | attn
            checker.compare(weights, expected_weights, f"{case}, weights", masked=mask)
            checker.compare(output, expected, f"{case}, output")
    return checker.report()


# the layer's mistakes that can happen here (no padding mask), the mask named as this exercise names it
_CROSS_MISTAKES = [
    (flags, "the mask is not applied: masked keys get weight" if "no_attn" in flags else message)
    for flags, message in _MISTAKES
    if not {"no_padding", "padding_on_rows"} & flags.keys()
]


def multi_head_cross_attention(
    candidate: Callable[..., tuple[torch.Tensor, torch.Tensor]],
) -> bool:
    """Check ``candidate(query, memory, params, num_heads, mask)`` -> ``(output, weights)``:
    queries from ``query`` ``(batch, m, d_model)``, keys and values from ``memory``
    ``(batch, n, d_model)`` with m != n, and a bool ``mask`` ``(batch, m, n)``, True = may not
    attend, different for every sequence (every query keeps at least one key); weights
    ``(batch, heads, m, n)``. Compared in float64 with the layer written out, and naming
    typical mistakes."""
    checker = Checker("multi_head_cross_attention")
    generator = torch.Generator().manual_seed(58)
    cases = [(2, 3, 5, 16, 4), (3, 6, 4, 24, 3), (1, 1, 7, 8, 2), (2, 5, 2, 12, 1)]  # m != n
    for batch, m, n, d_model, heads in cases:
        batch, head_dim = vary(batch, d_model // heads)
        d_model = head_dim * heads
        case = f"batch {batch}, {m} queries, {n} keys, d_model {d_model}, {heads} head(s)"
        params = {
            f"{kind}_{name}": torch.randn(*shape, generator=generator) / d_model**0.5
            for name in "qkvo"
            for kind, shape in (("W", (d_model, d_model)), ("b", (d_model,)))
        }
        query = torch.randn(batch, m, d_model, generator=generator)
        memory = torch.randn(batch, n, d_model, generator=generator)
        mask = torch.rand(batch, m, n, generator=generator) < 0.4
        # every query keeps one key and loses another (n >= 2), so neither the mask nor its
        # inverse leaves a query with nothing to attend to
        keep = torch.randint(0, n, (batch, m, 1), generator=generator)
        lose = (keep + torch.randint(1, n, (batch, m, 1), generator=generator)) % n
        mask.scatter_(-1, keep, False).scatter_(-1, lose, True)
        expected, expected_weights = _forward(
            query, memory, memory, params, heads, None, mask[:, None]
        )
        result = checker.call(
            candidate,
            query.clone(),
            memory.clone(),
            {name: t.clone() for name, t in params.items()},
            heads,
            mask.clone(),
            case=case,
            pair="(output, weights)",
        )
        if result is None:
            continue
        output, weights = result
        forward = partial(_forward, query, memory, memory, params, heads, None, mask[:, None])
        if not _names_a_mistake(checker, case, output, expected, forward, _CROSS_MISTAKES):
            checker.compare(
                weights,
                expected_weights,
                f"{case}, weights (batch, heads, m, n)",
                masked=mask[:, None],
                masked_name="masked keys",
            )
            checker.compare(output, expected, f"{case}, output (batch, m, d_model)")
    return checker.report()


def _grouped_reference(q, k, v, attn_mask, **wrong):
    """Grouped-query attention in float64 by repeating each key/value head for its query heads
    (``repeat_interleave``), or one typical mistake of it (the flags in ``wrong``)."""
    per_group = q.shape[1] // k.shape[1]
    if wrong.get("tiled"):  # query head i paired with key/value head i % groups
        k, v = k.repeat(1, per_group, 1, 1), v.repeat(1, per_group, 1, 1)
    else:
        k, v = k.repeat_interleave(per_group, dim=1), v.repeat_interleave(per_group, dim=1)
    scale = 1.0 if wrong.get("unscaled") else q.shape[-1] ** 0.5
    scores = q.double() @ k.double().transpose(-2, -1) / scale
    if attn_mask is not None:
        mask = ~attn_mask if wrong.get("inverted") else attn_mask
        scores = scores.masked_fill(mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ v.double(), weights


_GQA_MISTAKES = [
    (
        {"tiled": True},
        "query head i must share key/value head i // (num_heads // num_kv_heads) "
        "(consecutive query heads form a group: repeat_interleave), not i % num_kv_heads (repeat)",
    ),
    ({"unscaled": True}, "the scores are not scaled: divide them by sqrt(head_dim)"),
    ({"inverted": True}, "mask polarity inverted: True means 'may NOT attend'"),
]


def grouped_query_attention(candidate: Callable[..., tuple[torch.Tensor, torch.Tensor]]) -> bool:
    """Check ``candidate(q, k, v, attn_mask)`` -> ``(output, weights)``: q ``(batch, heads, m, d)``,
    k and v ``(batch, kv_heads, n, d)``, against attention with each key/value head repeated for
    its group of query heads; multi-query (one key/value head) and multi-head attention (as many
    as query heads) are among the cases."""
    checker = Checker("grouped_query_attention")
    generator = torch.Generator().manual_seed(57)
    cases = [  # batch, query heads, key/value heads, m, n, head_dim, causal
        (2, 4, 2, 5, 5, 8, True),
        (1, 6, 1, 3, 7, 4, False),
        (2, 8, 2, 6, 6, 4, False),
        (1, 3, 3, 4, 4, 8, True),
    ]
    for batch, heads, kv_heads, m, n, d, causal in cases:
        batch, m, n, d = vary(batch, m, n, d)  # other sizes in a hidden test
        n = m if causal else n
        kind = {1: "multi-query", heads: "multi-head"}.get(kv_heads, "grouped-query")
        case = f"{heads} query heads, {kv_heads} key/value head(s) ({kind}), {m} queries, {n} keys"
        case += ", causal mask" if causal else ""
        q = torch.randn(batch, heads, m, d, generator=generator)
        k = torch.randn(batch, kv_heads, n, d, generator=generator)
        v = torch.randn(batch, kv_heads, n, d, generator=generator)
        mask = torch.ones(m, n, dtype=torch.bool).triu(diagonal=1) if causal else None
        result = checker.call(
            candidate,
            q.clone(),
            k.clone(),
            v.clone(),
            None if mask is None else mask.clone(),
            case=case,
            pair="(output, weights)",
        )
        if result is None:
            continue
        output, weights = result
        expected, expected_weights = _grouped_reference(q, k, v, mask)
        for flags, message in _GQA_MISTAKES:
            wrong_output, _ = _grouped_reference(q, k, v, mask, **flags)
            if close(wrong_output, expected, equal_nan=True):  # no difference in this case
                continue
            if close(output, wrong_output, equal_nan=True):
                checker.expect(False, f"{case}: {message}")
                break
        else:
            masked = torch.zeros(m, n, dtype=torch.bool) if mask is None else mask
            checker.compare(
                weights,
                expected_weights,
                f"{case}, weights",
                masked=masked,
                masked_name="future positions (True in the causal attn_mask)",
            )
            checker.compare(output, expected, f"{case}, output")
    return checker.report()


def kv_cache_bytes(candidate: Callable[..., int]) -> bool:
    """Check ``candidate(num_layers, num_kv_heads, head_dim, num_tokens, bytes_per_number)``: the
    bytes a KV cache takes, a key and a value per token, layer and key/value head."""
    checker = Checker("kv_cache_bytes")
    cases = [(6, 8, 64, 1, 4), (6, 2, 64, 4096, 4), (32, 8, 128, 8192, 2), (1, 1, 1, 1, 1)]
    sizes = (1, 2, 4, 8)  # bytes a number: int8, float16, float32, float64
    for layers, kv_heads, head_dim, tokens, size in cases:
        # other numbers in a hidden test: each grows, and the bytes a number change
        layers, kv_heads, head_dim, tokens, shift = vary(layers, kv_heads, head_dim, tokens, 0)
        size = sizes[(sizes.index(size) + shift) % len(sizes)]
        case = (
            f"{layers} layers, {kv_heads} key/value heads of {head_dim}, {tokens} tokens, "
            f"{size} bytes a number"
        )
        expected = 2 * layers * kv_heads * head_dim * tokens * size
        actual = checker.call(candidate, layers, kv_heads, head_dim, tokens, size, case=case)
        if actual is None:
            continue
        if actual == expected // 2 and size == 2:
            checker.expect(
                False,
                f"{case}: {actual!r} is half the answer: a factor 2 is missing; with "
                "bytes_per_number=2 the other cases tell whether it is bytes_per_number or the "
                "2 of a key and a value",
            )
        elif actual == expected // 2:
            checker.expect(False, f"{case}: half the answer: the cache holds keys *and* values")
        elif actual == expected // size and size > 1:
            checker.expect(False, f"{case}: that counts numbers; multiply by bytes_per_number")
        else:
            checker.expect(actual == expected, f"{case}: expected {expected:,}, got {actual!r}")
    return checker.report()


def _count_projected_rows(layers: list[nn.Module], d_model: int) -> tuple[list[list[int]], list]:
    """Hooks that record, per layer, the rows (positions times sequences) of each call that
    projects keys: ``k_proj``, or the layer itself in self-attention (which projects q, k and v in
    one product)."""
    calls: list[list[int]] = [[] for _ in layers]
    hooks = []
    for index, layer in enumerate(layers):

        def count(module, inputs, output, index=index):
            calls[index].append(inputs[0].numel() // d_model)

        def count_call(module, args, index=index):
            if len(args) >= 2 and args[0] is args[1]:  # the fused self-attention product
                calls[index].append(args[1].numel() // d_model)

        hooks.append(layer.k_proj.register_forward_hook(count))
        hooks.append(layer.register_forward_pre_hook(count_call))
    return calls, hooks


def _stack(layers: list[nn.Module], x: torch.Tensor, residual: bool = True) -> torch.Tensor:
    """The full causal recomputation of the stack (``residual=False``: a typical mistake)."""
    from attention_to_bert.masks import causal_mask

    h = x
    for layer in layers:
        attended = layer(h, h, h, attn_mask=causal_mask(x.shape[1]))[0]
        h = h + attended if residual else attended
    return h


def cached_decoding(candidate: Callable[[list, torch.Tensor], torch.Tensor]) -> bool:
    """Check ``candidate(layers, x)``: the stack ``h = h + layer(h, h, h, attn_mask=causal)`` over
    ``layers`` (``MultiHeadAttention``), computed one position at a time with a cache of keys and
    values per layer, against the full causal recomputation; each layer must project the key of
    each position once, one position (of each sequence) a call."""
    from attention_to_bert.multihead import MultiHeadAttention

    checker = Checker("cached_decoding")
    generator = torch.Generator().manual_seed(100)  # hidden tests shift its seed
    for batch, n, head_dim, heads, depth in [(2, 5, 4, 4, 2), (1, 7, 4, 2, 2), (3, 4, 4, 3, 3)]:
        batch, n, head_dim = vary(batch, n, head_dim)  # other sizes in a hidden test
        d_model = heads * head_dim
        with torch.random.fork_rng(devices=[]):  # building draws from the CPU generator
            layers = [MultiHeadAttention(d_model, heads).eval() for _ in range(depth)]
        with torch.no_grad():
            for parameter in (p for layer in layers for p in layer.parameters()):
                parameter.copy_(torch.randn(parameter.shape, generator=generator) / head_dim)
        x = torch.randn(batch, n, d_model, generator=generator)
        case = f"{depth} layers of {heads} heads of {head_dim}, batch {batch}, {n} positions"
        with torch.no_grad():
            expected, no_residual = _stack(layers, x), _stack(layers, x, residual=False)
            calls, hooks = _count_projected_rows(layers, d_model)
            try:
                actual = checker.call(candidate, layers, x.clone(), case=case)
            finally:
                for hook in hooks:
                    hook.remove()
        mistakes = [(no_residual, "the residual is missing: h = h + layer(...) in every layer")]
        if not checker.compare(actual, expected, case, mistakes, atol=1e-4):
            continue
        seen, at_once = (
            [sum(rows) // batch for rows in calls],
            [max(rows or [0]) // batch for rows in calls],
        )
        if not checker.expect(
            all(count <= n for count in seen),
            f"{case}: the key projections saw {seen} positions per layer, expected {n} "
            "each: project only the newest position and keep the earlier keys and values "
            "in the cache",
        ):
            continue
        checker.expect(
            max(at_once) <= 1 and all(count == n for count in seen),
            f"{case}: the key projections received {at_once} positions at once per layer: decode "
            "one position at a time (the newest, as a decoder generates) and read the earlier "
            "keys and values from each layer's cache, not one causal pass over the whole input",
        )
    return checker.report()


def _importance_reference(attention: nn.Module, x: torch.Tensor, loss_fn: Callable) -> tuple:
    """In float64: |dL/d gate| of each head (the answer), the signed gradient, and the change of
    the loss when each head is switched off (two typical mistakes)."""
    import copy

    from attention_to_bert.multihead import merge_heads, split_heads

    layer = copy.deepcopy(attention).double()
    x = x.double()
    heads = layer.num_heads

    def loss(gates: torch.Tensor) -> torch.Tensor:
        q = split_heads(layer.q_proj(x), heads)
        k = split_heads(layer.k_proj(x), heads)
        v = split_heads(layer.v_proj(x), heads)
        weights = torch.softmax(q @ k.transpose(-2, -1) / layer.head_dim**0.5, dim=-1)
        per_head = (weights @ v) * gates[:, None, None]  # (batch, heads, n, head_dim)
        return loss_fn(layer.out_proj(merge_heads(per_head)))

    gates = torch.ones(heads, dtype=torch.float64, requires_grad=True)
    (gradient,) = torch.autograd.grad(loss(gates), gates)
    with torch.no_grad():
        full = loss(torch.ones(heads, dtype=torch.float64))
        off = torch.eye(heads, dtype=torch.float64)
        ablation = torch.stack([(full - loss(1 - off[h])).abs() for h in range(heads)])
    return gradient.abs().float(), gradient.float(), ablation.float()


class _DistanceLoss(nn.Module):
    """The loss a checker hands over: the root mean square distance to a fixed target (not linear
    in the gates, so the gradient at 1 and switching a head off differ)."""

    def __init__(self, target: torch.Tensor) -> None:
        super().__init__()
        self.register_buffer("target", target)

    def forward(self, output: torch.Tensor) -> torch.Tensor:
        return ((output - self.target) ** 2).mean().sqrt()


def head_importance(candidate: Callable[[nn.Module, torch.Tensor, Callable], torch.Tensor]) -> bool:
    """Check ``candidate(attention, x, loss_fn)``: the importance of each head of a
    ``MultiHeadAttention`` as Michel et al. (2019) define it, ``|dL/d xi_h|`` at ``xi = 1`` for a
    gate ``xi_h`` on head h's output before the output projection; shape ``(heads,)``."""
    from attention_to_bert.multihead import MultiHeadAttention

    checker = Checker("head_importance")
    generator = torch.Generator().manual_seed(55)
    for batch, n, head_dim, heads in [(2, 5, 4, 4), (1, 3, 8, 2), (3, 6, 2, 8), (2, 4, 8, 1)]:
        batch, n, head_dim = vary(batch, n, head_dim)
        d_model = head_dim * heads
        case = f"x of shape {(batch, n, d_model)}, {heads} heads"
        torch.manual_seed(int(torch.randint(0, 2**31 - 1, (1,), generator=generator)))
        attention = MultiHeadAttention(d_model, heads).eval()
        x = torch.randn(batch, n, d_model, generator=generator)
        loss_fn = _DistanceLoss(torch.randn(batch, n, d_model, generator=generator))
        expected, signed, ablation = _importance_reference(attention, x, loss_fn)
        mistakes = [
            (signed, "the sign is kept: the importance is the absolute value |dL/d xi_h|"),
            (
                ablation,
                "that is the change of the loss when each head is switched off; the score is "
                "the gradient at xi = 1 (one backward pass, not one forward pass per head)",
            ),
        ]
        actual = checker.call(candidate, attention, x, loss_fn, case=case)
        if isinstance(actual, torch.Tensor):
            actual = actual.detach()
        checker.compare(actual, expected, case, mistakes, atol=1e-4)
    return checker.report()
