"""The checkers of chapter 7: BERT's masking rule (80/10/10)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch import nn

from attention_to_bert.checks.checker import Checker, vary


def mlm_mask(candidate: Callable[..., Any]) -> bool:
    """Check ``candidate(input_ids, special_mask, mask_id, vocab_size) -> (corrupted_ids, labels)``: 15% of the
    non-special tokens are chosen, 80% -> ``mask_id``, 10% -> random id, 10% kept; ``labels`` = original or -100."""
    checker = Checker("mlm_mask")
    mask_id, (sequences, vocab_size, length) = 4, vary(200, 500, 500, spread=40)
    generator = torch.Generator().manual_seed(0)  # the inputs (hidden tests shift its seed)
    # the student's draws: reproducible, CPU state only (Checker.report restores it; CUDA untouched)
    torch.default_generator.manual_seed(0)
    ids = torch.randint(5, vocab_size, (sequences, length), generator=generator)
    positions = torch.arange(length).repeat(sequences, 1)
    special = (positions == 0) | (positions >= length - 50)  # [CLS]; [SEP] and padding
    case, pair = f"{sequences} sequences of {length} tokens", "(corrupted_ids, labels)"
    passed = ids.clone()
    result = checker.call(candidate, passed, special, mask_id, vocab_size, case=case, pair=pair)
    if result is None:
        return checker.report()
    want = (torch.long, tuple(ids.shape))
    for name, tensor in zip(("corrupted_ids", "labels"), result, strict=True):
        kind = type(tensor).__name__
        got = (tensor.dtype, tuple(tensor.shape)) if isinstance(tensor, torch.Tensor) else kind
        checker.expect(got == want, f"{name}: expected (dtype, shape) {want}, got {got}")
    if checker.problems:
        return checker.report()
    corrupted, labels = result
    chosen = labels != -100
    labelled = chosen[~special].float().mean().item()
    if labelled > 0.5:
        checker.expect(
            False,
            f"labels must be -100 where a token was not chosen: {labelled:.2f} of the ordinary "
            "tokens carry a label, expected about 0.15 (the loss reads only the chosen ones)",
        )
        return checker.report()
    checker.expect(
        not chosen[special].any() and torch.equal(corrupted[special], ids[special]),
        "special positions ([CLS], [SEP], padding) were chosen or changed: leave them alone",
    )
    checker.expect(
        torch.equal(labels[chosen], ids[chosen]),
        "labels must hold the ORIGINAL token at chosen positions (not the [MASK] or random id)",
    )
    checker.expect(
        torch.equal(corrupted[~chosen], ids[~chosen]),
        "tokens with label -100 were changed: label every chosen token (masked, randomised or "
        "kept) with its original id, and leave the others unchanged",
    )
    if checker.problems:
        return checker.report()
    rate = chosen.sum().item() / (~special).sum().item()
    masked = (corrupted[chosen] == mask_id).float().mean().item()
    kept = (corrupted[chosen] == ids[chosen]).float().mean().item()
    for share, expected, tolerance, what in (
        (rate, 0.15, 0.01, "of the non-special tokens were chosen"),
        (masked, 0.8, 0.03, "of the chosen tokens became [MASK]"),
        (1.0 - masked - kept, 0.1, 0.025, "of the chosen tokens got a random id"),
        (kept, 0.1, 0.025, "of the chosen tokens stayed unchanged"),
    ):
        message = f"{share:.3f} {what}, expected {expected}"
        checker.expect(abs(share - expected) < tolerance, message)
    replaced = corrupted[chosen & (corrupted != mask_id) & (corrupted != ids)]
    checker.expect(
        replaced.numel() == 0 or replaced.unique().numel() > 100,
        "the random replacements are not spread over the vocabulary: draw them uniformly",
    )
    again = checker.call(
        candidate, ids[:20], special[:20], mask_id, vocab_size, case="a second call"
    )
    checker.expect(
        again is None or not torch.equal(again[1], labels[:20]),
        "two calls chose the same positions: draw fresh random numbers on every call",
    )
    return checker.report()


def task_heads(heads: Any) -> bool:
    """Check ``heads = (SequenceClassifier, TokenTagger, SpanExtractor)`` (or a function returning
    them), Exercise 7.5's modules, on small ``BertModel`` encoders of other sizes: a linear layer on
    the [CLS] vector, the same linear layer on every vector, and start/end scores of exactly -1e4
    outside the passage."""
    from attention_to_bert.bert import BertConfig, BertModel
    from attention_to_bert.outputs import BertModelOutput

    checker = Checker("task_heads")
    if not isinstance(heads, tuple | list) and callable(heads):  # a function that returns them
        heads = checker.call(heads, case="called with no arguments")
        if heads is None:
            return checker.report()
    if not (isinstance(heads, tuple | list) and len(heads) == 3 and all(map(callable, heads))):
        checker.expect(
            False, "expected (SequenceClassifier, TokenTagger, SpanExtractor), three classes"
        )
        return checker.report()
    classifier_class, tagger_class, span_class = heads
    width, labels, tags = (2 * size for size in vary(8, 3, 2))
    config = BertConfig(
        vocab_size=40,
        hidden_size=width,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=2 * width,
        max_position_embeddings=32,
    )
    with torch.random.fork_rng(devices=[]):  # the student's random state is left as it was
        torch.manual_seed(0)
        encoder = BertModel(config).eval()
    # three rows: question (segment 0), passage (segment 1, ending in [SEP]), then padding
    (length,) = vary(11, spread=4)
    lengths, questions = [length, length - 3, length - 5], [3, 4, 2]
    ids = torch.randint(5, 40, (3, length))
    segments = torch.zeros(3, length, dtype=torch.long)
    mask = torch.zeros(3, length, dtype=torch.long)
    for row, (size, question) in enumerate(zip(lengths, questions, strict=True)):
        segments[row, question:size], mask[row, :size] = 1, 1
    ids = ids * mask
    passage = segments.bool() & mask.bool()
    passage[torch.arange(3), torch.tensor(lengths) - 1] = False  # the final [SEP]
    case = f"an encoder {width} wide, 3 rows of up to {length} tokens"

    class FixedEncoder(BertModel):
        """The encoder's interface, returning hidden states the checker chose."""

        def forward(self, input_ids, token_type_ids=None, attention_mask=None, *args, **kwargs):
            return BertModelOutput(self.fixed, [], torch.tanh(self.fixed[:, 0]))

    fixed = FixedEncoder(config).eval()
    hidden = torch.randn(3, length, width)
    other = hidden.clone()
    other[:, 1:] = torch.randn(3, length - 1, width)  # all but [CLS] changed

    def run(module_class, encoder_in, *args, inputs=None):
        module = checker.call(
            module_class, encoder_in, *args, case=f"{module_class.__name__}: {case}"
        )
        if module is None:
            return None
        if not isinstance(module, nn.Module):
            checker.expect(False, f"{module_class.__name__} must be an nn.Module")
            return None
        module.eval()
        with torch.no_grad():
            return checker.call(
                module, ids, segments, mask, case=f"{module_class.__name__} forward"
            )

    # SequenceClassifier: (batch, labels), reads the [CLS] vector only, linearly
    scores = run(classifier_class, encoder, labels)
    shape = tuple(getattr(scores, "shape", ()))
    if checker.expect(
        shape == (3, labels), f"SequenceClassifier: expected (3, {labels}) scores, got {shape}"
    ):
        module = classifier_class(fixed, labels).eval()
        outputs = []
        for states in (hidden, other, 2 * hidden, torch.zeros_like(hidden)):
            fixed.fixed = states
            with torch.no_grad():
                outputs.append(module(ids, segments, mask))
        checker.expect(
            torch.allclose(outputs[0], outputs[1], atol=1e-5),
            "SequenceClassifier: the scores change when vectors other than [CLS] change: read hidden[:, 0]",
        )
        checker.expect(
            torch.allclose(outputs[2] - outputs[3], 2 * (outputs[0] - outputs[3]), atol=1e-4)
            and not torch.allclose(outputs[0], outputs[3], atol=1e-6),
            "SequenceClassifier: the scores are not a linear layer of the [CLS] vector (no tanh or pooler)",
        )
    # TokenTagger: (batch, sequence, tags), the same linear layer at every position
    scores = run(tagger_class, encoder, tags)
    shape = tuple(getattr(scores, "shape", ()))
    if checker.expect(
        shape == (3, length, tags),
        f"TokenTagger: expected (3, {length}, {tags}) scores, got {shape}",
    ):
        module = tagger_class(fixed, tags).eval()
        same = hidden.clone()
        same[:, :] = hidden[0, 0]  # one vector everywhere
        fixed.fixed = same
        with torch.no_grad():
            everywhere = module(ids, segments, mask)
        checker.expect(
            torch.allclose(everywhere, everywhere[:1, :1].expand_as(everywhere), atol=1e-5),
            "TokenTagger: equal vectors got different scores: apply one linear layer to every vector",
        )
    _check_span(checker, run(span_class, encoder), passage, length)
    return checker.report()


def _check_span(checker: Checker, pair: Any, passage: torch.Tensor, length: int) -> None:
    """SpanExtractor's output: ``(start, end)``, each ``(batch, sequence)``, exactly -1e4 outside
    the passage and the head's own scores inside it."""
    if pair is None:
        return
    ok = isinstance(pair, tuple | list) and len(pair) == 2
    shapes = [tuple(getattr(part, "shape", ())) for part in pair] if ok else []
    if checker.expect(
        ok and shapes == [(3, length)] * 2,
        f"SpanExtractor: expected (start, end), each (3, {length}), got {shapes or type(pair).__name__}",
    ):
        for name, part in zip(("start", "end"), pair, strict=True):
            checker.expect(
                bool((part[~passage] == -1e4).all()),
                f"SpanExtractor: {name} scores must be exactly -1e4 outside the passage (segment A, "
                "padding and the passage's final [SEP])",
            )
            checker.expect(
                bool((part[passage] > -1e3).all()) and part[passage].std() > 0,
                f"SpanExtractor: {name} scores inside the passage must be the head's own scores",
            )


def pooling(candidate: Callable[..., Any]) -> bool:
    """Check ``candidate(hidden, attention_mask, how) -> (batch, width)``, Exercise 7.6's pooling:
    ``how="cls"`` gives each row's first ([CLS]) output vector, ``how="mean"`` the mean of the vectors
    of the real tokens (``attention_mask`` 1), padding left out; any other ``how`` a ValueError."""
    checker = Checker("pooling")
    batch, length, width = vary(3, 7, 4, spread=2)
    with torch.random.fork_rng(devices=[]):  # the student's random state is left as it was
        torch.manual_seed(0)
        hidden = torch.randn(batch, length, width)
    lengths = torch.tensor([length, length - 2, 1][:batch] + [length - 1] * (batch - 3))
    mask = (torch.arange(length) < lengths[:, None]).long()  # 1: a real token, 0: padding
    hidden[mask == 0] = 1e3  # padding vectors far from the others: counting them shows
    real = mask.unsqueeze(-1).float()
    expected = {"cls": hidden[:, 0], "mean": (hidden * real).sum(1) / real.sum(1)}
    mistakes = {
        "cls": [(hidden[:, -1], "that is the last position: [CLS] is the first, position 0")],
        "mean": [
            (hidden.mean(1), "padding was averaged in: weight each vector by attention_mask"),
            (
                (hidden * real).sum(1) / length,
                "divided by the padded length: divide by the number of real tokens",
            ),
        ],
    }
    for how, want in expected.items():
        case = f'how="{how}", {batch} rows of {length} vectors {width} wide, some padded'
        got = checker.call(candidate, hidden, mask, how, case=case)
        checker.compare(got, want, case, mistakes[how], atol=1e-4)
    checker.expect_value_error(lambda: candidate(hidden, mask, "max"), 'how="max"', "how")
    return checker.report()


def bert_by_hand(functions: Any) -> bool:
    """Check Exercise 7.7's pair ``functions = (embeddings, layer)`` (or a function returning it)
    against ``transformers.BertModel`` (random weights, small):
    ``embeddings(input_ids, token_type_ids, weights, eps) -> (batch, seq, hidden)`` and
    ``layer(hidden, attention_mask, weights, index, heads, eps) -> (batch, seq, hidden)``, where
    ``weights`` is the model's ``state_dict()`` (Hugging Face's names) and ``attention_mask`` is 1 at
    real tokens, 0 at padding. Compared: the embedding output and each layer's output, real tokens."""
    import transformers

    checker = Checker("bert_by_hand")
    if not isinstance(functions, tuple | list) and callable(functions):  # one that returns them
        functions = checker.call(functions, case="called with no arguments")
        if functions is None:
            return checker.report()
    if not (isinstance(functions, tuple | list) and len(functions) == 2):
        checker.expect(False, "expected (embeddings, layer), a pair of functions")
        return checker.report()
    embeddings, layer = functions
    heads, layers, (head_size, length) = 2, 2, vary(4, 7, spread=2)
    width = heads * head_size
    config = transformers.BertConfig(
        vocab_size=50,
        hidden_size=width,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        intermediate_size=4 * width,
        max_position_embeddings=32,
        attn_implementation="eager",
    )
    with torch.random.fork_rng(devices=[]):  # the student's random state is left as it was
        torch.manual_seed(0)
        reference = transformers.BertModel(config, add_pooling_layer=False).eval()
        with torch.no_grad():  # larger than the initial 0.02: a mistake shows
            for parameter in reference.parameters():
                parameter.add_(0.3 * torch.randn_like(parameter))
        ids = torch.randint(1, 50, (3, length))
    segments = torch.zeros_like(ids)
    segments[:, length // 2 :] = 1
    mask = torch.ones_like(ids)
    mask[1, -2:], mask[2, -3:] = 0, 0  # two padded rows
    ids = ids * mask
    real = mask.bool()
    with torch.no_grad():
        states = reference(
            input_ids=ids, token_type_ids=segments, attention_mask=mask, output_hidden_states=True
        ).hidden_states
    weights = {name: tensor.detach().clone() for name, tensor in reference.state_dict().items()}
    eps = config.layer_norm_eps
    case = f"3 rows of {length} tokens (2 padded), {heads} heads of {head_size}"
    got = checker.call(embeddings, ids, segments, weights, eps, case=f"embeddings, {case}")
    raw = (
        weights["embeddings.word_embeddings.weight"][ids]
        + weights["embeddings.position_embeddings.weight"][:length]
        + weights["embeddings.token_type_embeddings.weight"][segments]
    )
    no_segment = raw - weights["embeddings.token_type_embeddings.weight"][segments]
    norm = ("embeddings.LayerNorm.weight", "embeddings.LayerNorm.bias")
    mistakes = [
        (raw, "no LayerNorm: normalise the sum (weights 'embeddings.LayerNorm.*')"),
        (
            torch.nn.functional.layer_norm(no_segment, (width,), *(weights[n] for n in norm), eps),
            "the segment (token type) embedding is missing from the sum",
        ),
    ]
    checker.compare(got, states[0], f"embeddings, {case}", mistakes, atol=1e-4)
    for index in range(layers):
        where = f"layer {index}, {case}"
        out = checker.call(layer, states[index], mask, weights, index, heads, eps, case=where)
        if out is None:
            continue
        if not isinstance(out, torch.Tensor) or out.shape != states[index + 1].shape:
            checker.compare(out, states[index + 1], where)
            continue
        close_real = torch.allclose(
            out[real].double(), states[index + 1][real].double(), atol=1e-4, rtol=1e-4
        )
        if not close_real:
            largest = (out[real] - states[index + 1][real]).abs().max().item()
            checker.expect(
                False,
                f"{where}: the real tokens' outputs differ from transformers' (largest "
                f"difference {largest:.3g}); check the 1/sqrt(d_head) scaling, the padding mask "
                "(padding keys get weight 0), post-LN (normalise after adding the residual) and "
                "the exact GELU",
            )
    return checker.report()
