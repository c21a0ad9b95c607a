"""The checkers of chapter 8: the pre-training loss, with the switches of an ablation (the share of
tokens masked, and next-sentence prediction on or off), and the static vectors; and
``short_run_claims``, the claims about section 8.3's live run that the lesson and Lab 8.1 assert."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from attention_to_bert.bert import BertConfig
from attention_to_bert.checks.checker import Checker, vary
from attention_to_bert.data.pairs import PairSampler
from attention_to_bert.pretraining import BertForPreTraining, mask_tokens

MASK_ID = 4  # [PAD] [UNK] [CLS] [SEP] [MASK], as in the book's vocabularies
HINT = (
    "the masks must be the ones pretraining.mask_tokens(batch['input_ids'], batch['special'], "
    "mask_id, vocab_size, generator, probability) draws, called once with the generator given"
)


def _reference(
    model: BertForPreTraining,
    batch: dict[str, torch.Tensor],
    seed: int,
    probability: float,
    nsp: bool,
    mask_id: int = MASK_ID,
    vocab_size: int | None = None,
    types: bool = True,
    attention: bool = True,
    halved: bool = False,
    reduction: str = "mean",
    targets: str = "labels",
) -> tuple[torch.Tensor, torch.Tensor]:
    """The loss, with masks drawn from a generator seeded ``seed``, and the generator's state
    afterwards; the arguments make typical mistakes (another [MASK] id or vocabulary size, no
    token types, no attention mask, the two losses averaged or summed over positions, the masked
    inputs as targets, NSP on sentences alone)."""
    generator = torch.Generator().manual_seed(seed)
    vocab_size = vocab_size or model.bert.config.vocab_size
    inputs, labels = mask_tokens(
        batch["input_ids"], batch["special"], mask_id, vocab_size, generator, probability
    )
    chosen = labels != -100
    mlm, next_logits = model(
        inputs,
        batch["token_type_ids"] if types else None,
        batch["attention_mask"] if attention else None,
        chosen,
    )
    wanted = inputs[chosen] if targets == "inputs" else labels[chosen]
    loss = F.cross_entropy(mlm, wanted, reduction=reduction)
    if nsp:  # the pairs only: a sentence alone has label -100 (cross_entropy's ignore_index)
        nsp_labels = batch["nsp_labels"]
        if targets == "nsp_everywhere":  # a sentence alone labelled "is next" (0)
            nsp_labels = nsp_labels.clamp_min(0)
        loss = loss + F.cross_entropy(next_logits, nsp_labels, reduction=reduction)
    return (loss / 2 if halved and nsp else loss), generator.get_state()


def _gradients(model: BertForPreTraining, loss: torch.Tensor) -> torch.Tensor:
    model.zero_grad()
    loss.backward()
    grads = [p.grad.flatten() for p in model.parameters() if p.grad is not None]
    model.zero_grad()
    return torch.cat(grads) if grads else torch.zeros(0)


def _mistakes(
    model: BertForPreTraining,
    batch: dict[str, torch.Tensor],
    seed: int,
    probability: float,
    nsp: bool,
    mask_id: int,
    other_vocab: int,
) -> list[tuple[torch.Tensor, str]]:
    """The losses of typical wrong answers, each with its message."""

    def loss(**wrong: Any) -> torch.Tensor:
        arguments = {"mask_id": mask_id} | wrong
        return _reference(model, batch, seed, probability, nsp, **arguments)[0].detach()

    vocab_size = model.bert.config.vocab_size
    mistakes = [
        (
            _reference(model, batch, seed, probability, not nsp, mask_id)[0].detach(),
            "the NSP loss is added although nsp=False: return the masked-LM loss alone"
            if not nsp
            else "the NSP loss is missing: with nsp=True add the next-sentence cross-entropy",
        ),
        (
            loss(mask_id=MASK_ID),
            f"the masks write [MASK] = {MASK_ID}, not the mask_id given ({mask_id}): pass "
            "mask_id to mask_tokens",
        ),
        (
            loss(types=False),
            "the model was called without batch['token_type_ids'] (segment A or B)",
        ),
        (
            loss(attention=False),
            "the model was called without batch['attention_mask']: padding is attended",
        ),
        (loss(halved=True), "the two losses are averaged: BERT adds them (mlm_loss + nsp_loss)"),
        (
            loss(reduction="sum"),
            "the cross-entropy is summed over positions (reduction='sum'): take its mean, "
            "cross_entropy's default",
        ),
        (
            loss(targets="inputs"),
            "the targets are the masked inputs (mostly [MASK]): predict the original tokens, the "
            "labels mask_tokens returns, at the chosen positions",
        ),
    ]
    if other_vocab < vocab_size:  # the other model's vocabulary, hard-coded
        mistakes.append(
            (
                loss(vocab_size=other_vocab),
                f"random replacements drawn from a vocabulary of {other_vocab}, not the model's "
                f"{vocab_size}: pass model.bert.config.vocab_size to mask_tokens",
            )
        )
    if nsp:
        mistakes.append(
            (
                loss(targets="nsp_everywhere"),
                "the NSP loss counts a sentence alone (label -100) as a pair: only pairs take "
                "part (cross_entropy skips -100, its ignore_index; do not replace it)",
            )
        )
    if probability != 0.15:
        mistakes.append(
            (
                _reference(model, batch, seed, 0.15, nsp, mask_id)[0].detach(),
                "the masks ignore `probability`: pass it to mask_tokens",
            )
        )
    return mistakes


def _model(vocab: int, half: int, length: int, generator: torch.Generator) -> BertForPreTraining:
    """A one-layer BERT with pre-training heads, its weights drawn from ``generator``."""
    config = BertConfig(
        vocab_size=vocab,
        hidden_size=2 * half,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=4 * half,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
        max_position_embeddings=length,
        initializer_range=0.5,  # weights large enough that the context changes the loss
    )
    # reproducible, CPU state only (Checker.report restores it)
    torch.default_generator.manual_seed(int(torch.randint(2**31, (1,), generator=generator)))
    return BertForPreTraining(config)


def pretraining_loss(candidate: Callable[..., Any]) -> bool:
    """Check ``candidate(model, batch, mask_id, generator, probability, nsp) -> loss``: ``batch`` (a
    ``PairSampler.batch``) masked with ``pretraining.mask_tokens(..., generator, probability)``, then
    the masked-LM cross-entropy at the chosen positions plus, if ``nsp``, the next-sentence
    cross-entropy over the pairs; one scalar tensor that backpropagates into ``model``. The batch
    is not modified. Two models of two vocabularies, [MASK] at id 4 in the first, elsewhere in the
    second."""
    checker = Checker("pretraining_loss")
    generator = torch.Generator().manual_seed(8)  # the inputs (hidden tests shift its seed)
    vocab, half, length, size, extra = vary(40, 8, 12, 10, 17)
    models = [
        _model(vocab, half, length, generator),
        _model(vocab + extra, half, length, generator),
    ]
    other_mask_id = int(torch.randint(5, vocab, (1,), generator=generator))
    documents = [  # 12 documents of 1 to 3 sentences, each 2 to 8 ordinary tokens
        [
            torch.randint(5, vocab, (int(n),), generator=generator).tolist()
            for n in torch.randint(2, 9, (int(count),), generator=generator)
        ]
        for count in torch.randint(1, 4, (12,), generator=generator)
    ]
    seed = int(torch.randint(1000, (1,), generator=generator))
    sampler = PairSampler(documents, 2, 3, max_length=length, seed=seed)
    batch = sampler.batch(size)
    while not (batch["nsp_labels"] != -100).any():  # at least one pair to ask NSP about
        batch = sampler.batch(size)
    first, second = (
        f"vocabulary {vocab}, mask_id {MASK_ID}",
        (f"vocabulary {vocab + extra}, mask_id {other_mask_id}"),
    )
    cases = [
        (0.15, True, 0, MASK_ID, f"BERT's recipe (probability 0.15, nsp=True), {first}"),
        (0.15, False, 0, MASK_ID, f"without NSP (probability 0.15, nsp=False), {first}"),
        (0.4, True, 1, other_mask_id, f"40% masked (probability 0.4, nsp=True), {second}"),
        (0.4, False, 1, other_mask_id, f"40% masked, without NSP (nsp=False), {second}"),
    ]
    hinted = False  # the hint on the masks, printed once
    for number, (probability, nsp, which, mask_id, name) in enumerate(cases):
        model, other_vocab = models[which], models[1 - which].bert.config.vocab_size
        case = f"{name}, a batch of {size} examples"
        mask_seed = seed + number
        given = {key: value.clone() for key, value in batch.items()}
        draws = torch.Generator().manual_seed(mask_seed)
        loss = checker.call(candidate, model, given, mask_id, draws, probability, nsp, case=case)
        if loss is None:
            continue
        expected, state = _reference(model, batch, mask_seed, probability, nsp, mask_id)
        mistakes = _mistakes(model, batch, mask_seed, probability, nsp, mask_id, other_vocab)
        if not checker.compare(loss, expected.detach(), f"{case}: loss", mistakes, atol=1e-5):
            if "values differ" in checker.problems[-1] and not hinted:
                hinted = True
                if torch.equal(
                    draws.get_state(), state
                ):  # the masks were drawn as mask_tokens does
                    checker.expect(
                        False,
                        "the generator was used as mask_tokens uses it, yet the loss differs: "
                        "check the mask_id and vocab_size given to mask_tokens, the targets (its "
                        "labels at the chosen positions), the mean over them, and NSP over the "
                        "pairs only",
                    )
                else:
                    checker.expect(False, HINT)
            continue
        if not checker.expect(
            loss.shape == () and loss.requires_grad,
            f"{case}: the loss must be one number that backpropagates into the model (a tensor "
            "of shape (), not .item(), not computed under torch.no_grad)",
        ):
            continue
        checker.compare(
            _gradients(model, loss),
            _gradients(model, expected),
            f"{case}: gradients",
            atol=1e-5,
        )
    return checker.report()


def _static_reference(
    embeddings: torch.nn.Embedding,
    input_ids: torch.Tensor,
    attention_mask: torch.Tensor,
    special_ids: list[int],
    specials: bool = False,
    padding: bool = False,
    total: bool = False,
) -> torch.Tensor:
    """The mean of the input token vectors over each row's real, non-special tokens; the switches
    make typical mistakes (special tokens or padding kept in the mean, a sum)."""
    keep = torch.ones_like(input_ids, dtype=torch.bool) if padding else attention_mask.bool()
    if not specials:
        keep = keep & ~torch.isin(input_ids, torch.tensor(special_ids))
    weights = keep.unsqueeze(-1).to(embeddings.weight.dtype)
    summed = (embeddings(input_ids) * weights).sum(1)
    return summed if total else summed / weights.sum(1).clamp_min(1.0)


def static_vectors(candidate: Callable[..., Any]) -> bool:
    """Check ``candidate(embeddings, input_ids, attention_mask, special_ids) -> (batch, d)``: the
    mean of ``embeddings(input_ids)`` over each row's tokens that are neither padding
    (``attention_mask`` 0) nor in ``special_ids`` ([CLS], [SEP]); no gradient needed. Two tables of
    other sizes, rows of different lengths."""
    checker = Checker("static_vectors")
    generator = torch.Generator().manual_seed(11)  # the inputs (hidden tests shift its seed)
    vocab, width, length, size = vary(30, 6, 9, 4)
    for number, (cls_id, sep_id) in enumerate([(2, 3), (7, 1)]):
        table = torch.nn.Embedding(vocab + 5 * number, width + 2 * number)
        with torch.no_grad():
            table.weight.copy_(torch.randn(table.weight.shape, generator=generator))
        specials = [cls_id, sep_id]
        ordinary = [t for t in range(4, vocab) if t not in specials]
        ids = torch.zeros(size, length, dtype=torch.long)
        mask = torch.zeros(size, length, dtype=torch.long)
        for row in range(size):
            real = int(torch.randint(1, length - 1, (1,), generator=generator))
            picks = torch.randint(len(ordinary), (real,), generator=generator)
            tokens = [cls_id, *[ordinary[int(p)] for p in picks], sep_id]
            ids[row, : len(tokens)] = torch.tensor(tokens)
            mask[row, : len(tokens)] = 1
        case = f"table {vocab + 5 * number} x {width + 2 * number}, [CLS] {cls_id} [SEP] {sep_id}"
        result = checker.call(candidate, table, ids.clone(), mask.clone(), specials, case=case)
        if result is None:
            continue
        if isinstance(result, np.ndarray):
            result = torch.from_numpy(result)
        with torch.no_grad():
            expected = _static_reference(table, ids, mask, specials)
            mistakes = [
                (
                    _static_reference(table, ids, mask, specials, specials=True),
                    "[CLS] and [SEP] are in the mean: leave out the special_ids",
                ),
                (
                    _static_reference(table, ids, mask, specials, padding=True),
                    "the padding is in the mean: keep only positions where attention_mask is 1",
                ),
                (
                    _static_reference(table, ids, mask, specials, total=True),
                    "a sum, not a mean: divide by the number of tokens kept in each row",
                ),
            ]
        if isinstance(result, torch.Tensor):
            result = result.detach().float()
        checker.compare(result, expected, f"{case}: vectors", mistakes, atol=1e-5)
    return checker.report()


def short_run_claims(
    history: list[tuple[float, float]],
    held_top1: float,
    unigram_top1: float,
    unigram_loss: float,
    quoted: float = 7.32,
) -> dict[str, bool]:
    """Section 8.3's claims about its 125-step live run, each by name, True where it holds:
    ``history`` holds ``(mlm_loss, nsp_loss)`` a step; ``held_top1`` is the last held-out top-1
    accuracy, ``unigram_top1`` the unigram baseline's; ``unigram_loss`` is the unigram guess's
    loss (nats) and ``quoted`` the last 25 steps' mean MLM loss as the prose quotes it."""
    if len(history) < 50:
        raise ValueError(f"history must hold at least 50 steps, got {len(history)}")

    def mean(rows: list[tuple[float, float]], column: int) -> float:
        return sum(row[column] for row in rows) / len(rows)

    first, last = history[:10], history[-25:]
    return {
        "the MLM loss falls": mean(first, 0) > 8.5 and mean(last, 0) < 7.8,
        "held-out top-1 about the unigram's": 0.8 * unigram_top1 < held_top1 < 2 * unigram_top1,
        "the loss ends near the unigram guess": abs(mean(last, 0) - unigram_loss) < 0.3,
        "the level the prose quotes": abs(mean(last, 0) - quoted) < 0.05,
        "flat over the last 50 steps": abs(mean(history[-50:-25], 0) - mean(last, 0)) < 0.05,
        "NSP starts to learn": mean(last, 1) < math.log(2),
    }


def _read_reference(
    hidden: torch.Tensor, attention_mask: torch.Tensor, dense: torch.nn.Linear, how: str
) -> torch.Tensor:
    """Exercise 8.2's two readings of an encoder's last layer: ``[CLS]``, or BERT's pooled vector."""
    first = hidden[:, 0]  # (batch, width): the [CLS] position
    return first if how == "cls" else torch.tanh(dense(first))


def sentence_vector(candidate: Callable[..., Any]) -> bool:
    """Check ``candidate(hidden, attention_mask, dense, how) -> (batch, width)``, Exercise 8.2's
    readings of an encoder's last layer ``hidden`` (batch, length, width): ``how="cls"`` gives each
    row's ``[CLS]`` vector (position 0), ``how="pooled"`` BERT's pooled vector
    ``tanh(dense(h_[CLS]))``; any other ``how`` a ValueError that names ``how``. Two layers of other
    sizes, rows padded to different lengths."""
    checker = Checker("sentence_vector")
    generator = torch.Generator().manual_seed(13)  # the inputs (hidden tests shift its seed)
    batch, length, width = vary(3, 6, 4, spread=2)
    for number in range(2):
        rows, wide = batch + number, width + 2 * number
        hidden = torch.randn(rows, length, wide, generator=generator)
        lengths = torch.randint(2, length + 1, (rows,), generator=generator)
        lengths[0] = length  # one row unpadded
        mask = (torch.arange(length) < lengths[:, None]).long()  # 1: a real token
        dense = torch.nn.Linear(wide, wide)
        with torch.no_grad():
            dense.weight.copy_(torch.randn(wide, wide, generator=generator))
            dense.bias.copy_(torch.randn(wide, generator=generator))
        real = mask.unsqueeze(-1).float()
        mean = (hidden * real).sum(1) / real.sum(1)
        last_real = hidden[torch.arange(rows), lengths - 1]
        with torch.no_grad():
            mistakes = {
                "cls": [
                    (hidden[:, -1], "that is the last position: [CLS] is the first, position 0"),
                    (last_real, "that is each row's last real token ([SEP]): [CLS] is position 0"),
                    (mean, "that is the mean over the tokens: [CLS] is the vector at position 0"),
                ],
                "pooled": [
                    (dense(hidden[:, 0]), "the tanh is missing: pooled = tanh(dense(h_[CLS]))"),
                    (
                        hidden[:, 0],
                        "that is the raw [CLS] vector: pass it through dense, then tanh",
                    ),
                    (torch.tanh(hidden[:, 0]), "dense is missing: pooled = tanh(dense(h_[CLS]))"),
                    (torch.tanh(dense(mean)), "dense and tanh read the mean: BERT reads [CLS]"),
                    (dense(torch.tanh(hidden[:, 0])), "tanh comes after dense, not before"),
                    (torch.sigmoid(dense(hidden[:, 0])), "a sigmoid: BERT's pooler uses tanh"),
                ],
            }
        for how in ("cls", "pooled"):
            case = f'how="{how}", {rows} rows of {length} vectors {wide} wide, some padded'
            got = checker.call(candidate, hidden.clone(), mask.clone(), dense, how, case=case)
            if isinstance(got, torch.Tensor):
                got = got.detach()
            with torch.no_grad():
                want = _read_reference(hidden, mask, dense, how)
            checker.compare(got, want, case, mistakes[how], atol=1e-5)
    checker.expect_value_error(lambda: candidate(hidden, mask, dense, "mean"), 'how="mean"', "how")
    return checker.report()


def _baseline_reference(
    vectors: np.ndarray,
    labels: np.ndarray,
    split: np.ndarray,
    grid: tuple[float, ...],
    choose_on: str = "validation",
    scale: str = "train",
) -> tuple[float, float]:
    """Exercise 8.4's baseline: logistic regression on standardised vectors (the scaler fitted on
    the training rows), ``C`` chosen on the validation rows (the first of a tie), and the chosen
    model's test accuracy; the switches make typical mistakes (``C`` chosen on another split, no
    scaling, the scaler fitted on every row)."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    train, test, chosen = split == "train", split == "test", split == choose_on
    x = vectors
    if scale != "none":
        x = StandardScaler().fit(vectors[train] if scale == "train" else vectors).transform(vectors)
    scores, models = {}, {}
    for c in grid:
        models[c] = LogisticRegression(C=c, max_iter=2000).fit(x[train], labels[train])
        scores[c] = float(models[c].score(x[chosen], labels[chosen]))
    best = max(grid, key=scores.__getitem__)
    return best, float(models[best].score(x[test], labels[test]))


def _baseline_data(
    generator: np.random.Generator, rows: int, width: int, classes: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Vectors, labels and a split ("train", "validation" or "test" a row): noisy class means, the
    features on scales from 0.1 to 10 (so that standardising them changes the answer)."""
    labels = np.arange(rows) % classes
    centres = generator.normal(size=(classes, width))
    vectors = centres[labels] + 2.0 * generator.normal(size=(rows, width))
    vectors *= 10.0 ** np.linspace(-1, 1, width)
    split = np.array(["train", "validation", "test"])[generator.permutation(rows) % 3]
    return vectors, labels, split


BASELINE_MISTAKES = (  # (keyword arguments of _baseline_reference, message)
    ({"choose_on": "test"}, "C was chosen on the test rows: choose it on the validation rows"),
    ({"choose_on": "train"}, "C was chosen on the training rows: choose it on the validation rows"),
    ({"scale": "none"}, "the vectors are not standardised: fit a StandardScaler first"),
    (
        {"scale": "all"},
        "the scaler was fitted on every row: fit it on the training rows only, then transform all",
    ),
)


def static_baseline(candidate: Callable[..., Any]) -> bool:
    """Check ``candidate(vectors, labels, split, grid) -> (C, test_accuracy)``, Exercise 8.4's
    baseline: ``vectors`` (rows, width) standardised with a ``StandardScaler`` fitted on the rows
    whose ``split`` is ``"train"``, a ``LogisticRegression(C=c, max_iter=2000)`` fitted on those rows
    for each ``c`` of ``grid``, the ``C`` whose model scores best on the ``"validation"`` rows (the
    first of a tie), and that model's accuracy on the ``"test"`` rows. Two data sets."""
    from threadpoolctl import threadpool_limits  # installed with scikit-learn

    checker = Checker("static_baseline")
    generator = np.random.default_rng(21)  # the inputs (hidden tests shift the sizes)
    rows, width, classes, steps = vary(150, 6, 3, 5)
    grid = tuple(10.0**power for power in range(-3, steps - 3))  # 0.001 to 10, more if hidden
    with threadpool_limits(1):  # small fits: one thread is much faster than several
        for number in range(2):
            for _ in range(8):  # data on which the first three mistakes each change the answer
                data = _baseline_data(generator, rows + 30 * number, width + number, classes)
                want = _baseline_reference(*data, grid)
                wrongs = [_baseline_reference(*data, grid, **a) for a, _ in BASELINE_MISTAKES[:3]]
                if want not in wrongs:
                    break
            case = f"{len(data[0])} rows of {data[0].shape[1]} features, {classes} classes"
            given = [part.copy() for part in data]
            result = checker.call(candidate, *given, grid, case=case)
            if result is None:
                continue
            if not checker.expect(
                isinstance(result, tuple | list) and len(result) == 2,
                f"{case}: expected a pair (C, test_accuracy), got {type(result).__name__}",
            ):
                continue
            try:
                got = (float(result[0]), float(result[1]))
            except (TypeError, ValueError):
                checker.expect(False, f"{case}: C and the accuracy must be numbers, got {result}")
                continue
            if got[0] == want[0] and abs(got[1] - want[1]) < 1e-9:
                continue
            for arguments, message in BASELINE_MISTAKES:
                wrong = _baseline_reference(*data, grid, **arguments)
                if wrong != want and got[0] == wrong[0] and abs(got[1] - wrong[1]) < 1e-9:
                    checker.expect(False, f"{case}: {message}")
                    break
            else:
                checker.expect(
                    False,
                    f"{case}: expected C {want[0]:g} and test accuracy {want[1]:.4f}, got {got}",
                )
    return checker.report()
