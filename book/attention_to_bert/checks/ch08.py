"""The checker of chapter 8: the pre-training loss, with the switches of an ablation (the share of
tokens masked, and next-sentence prediction on or off)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F

from attention_to_bert.bert import BertConfig
from attention_to_bert.checks.checker import Checker, vary
from attention_to_bert.pretraining import BertForPreTraining, PairSampler, mask_tokens

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
    types: bool = True,
    attention: bool = True,
    halved: bool = False,
) -> torch.Tensor:
    """The loss, with masks drawn from a generator seeded ``seed``; the flags make typical mistakes
    (no token types, no attention mask, the two losses averaged)."""
    generator = torch.Generator().manual_seed(seed)
    vocab_size = model.bert.config.vocab_size
    inputs, labels = mask_tokens(
        batch["input_ids"], batch["special"], MASK_ID, vocab_size, generator, probability
    )
    chosen = labels != -100
    mlm, next_logits = model(
        inputs,
        batch["token_type_ids"] if types else None,
        batch["attention_mask"] if attention else None,
        chosen,
    )
    loss = F.cross_entropy(mlm, labels[chosen])
    if nsp:  # the pairs only: a sentence alone has label -100 (cross_entropy's ignore_index)
        loss = loss + F.cross_entropy(next_logits, batch["nsp_labels"])
    return loss / 2 if halved and nsp else loss


def _gradients(model: BertForPreTraining, loss: torch.Tensor) -> torch.Tensor:
    model.zero_grad()
    loss.backward()
    grads = [p.grad.flatten() for p in model.parameters() if p.grad is not None]
    model.zero_grad()
    return torch.cat(grads) if grads else torch.zeros(0)


def pretraining_loss(candidate: Callable[..., Any]) -> bool:
    """Check ``candidate(model, batch, mask_id, generator, probability, nsp) -> loss``: ``batch`` (a
    ``PairSampler.batch``) masked with ``pretraining.mask_tokens(..., generator, probability)``, then
    the masked-LM cross-entropy at the chosen positions plus, if ``nsp``, the next-sentence
    cross-entropy over the pairs; one scalar tensor that backpropagates into ``model``. The batch
    is not modified."""
    checker = Checker("pretraining_loss")
    generator = torch.Generator().manual_seed(8)  # the inputs (hidden tests shift its seed)
    vocab, half, length, size = vary(40, 8, 12, 10)
    # the model's weights: reproducible, CPU state only (Checker.report restores it)
    torch.default_generator.manual_seed(int(torch.randint(2**31, (1,), generator=generator)))
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
    model = BertForPreTraining(config)
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
    cases = [
        (0.15, True, "BERT's recipe (probability 0.15, nsp=True)"),
        (0.15, False, "without NSP (probability 0.15, nsp=False)"),
        (0.4, True, "40% masked (probability 0.4, nsp=True)"),
        (0.4, False, "40% masked, without NSP (probability 0.4, nsp=False)"),
    ]
    hinted = False  # the hint on the masks, printed once
    for number, (probability, nsp, name) in enumerate(cases):
        case = f"{name}, a batch of {size} examples"
        mask_seed = seed + number
        given = {key: value.clone() for key, value in batch.items()}
        draws = torch.Generator().manual_seed(mask_seed)
        loss = checker.call(candidate, model, given, MASK_ID, draws, probability, nsp, case=case)
        if loss is None:
            continue
        expected = _reference(model, batch, mask_seed, probability, nsp)
        mistakes = [
            (
                _reference(model, batch, mask_seed, probability, not nsp),
                "the NSP loss is added although nsp=False: return the masked-LM loss alone"
                if not nsp
                else "the NSP loss is missing: with nsp=True add the next-sentence cross-entropy",
            ),
            (
                _reference(model, batch, mask_seed, probability, nsp, types=False),
                "the model was called without batch['token_type_ids'] (segment A or B)",
            ),
            (
                _reference(model, batch, mask_seed, probability, nsp, attention=False),
                "the model was called without batch['attention_mask']: padding is attended",
            ),
            (
                _reference(model, batch, mask_seed, probability, nsp, halved=True),
                "the two losses are averaged: BERT adds them (mlm_loss + nsp_loss)",
            ),
        ]
        if probability != 0.15:
            mistakes.append(
                (
                    _reference(model, batch, mask_seed, 0.15, nsp),
                    "the masks ignore `probability`: pass it to mask_tokens",
                )
            )
        if not checker.compare(loss, expected.detach(), f"{case}: loss", mistakes, atol=1e-5):
            if "values differ" in checker.problems[-1] and not hinted:
                hinted = not checker.expect(False, HINT)
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
