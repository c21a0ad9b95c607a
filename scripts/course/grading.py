"""Graded runs of the checkers (the nbgrader course of ``scripts/course/make_course.py``, which copies
this file beside each assignment's notebook: its test cells ``import grading``). Course machinery,
not the book's: the chapters' checkers never import it.

``SOLVED_BY`` maps each exercise's checker to every package object that solves the exercise (by what
it does, not by its name); ``package_answer_blocked("causal_mask", globals())`` makes each of them
raise when graded work calls it, so a student cannot pass by calling the book's own answer.
``fresh_inputs(seed)`` makes a checker draw new random cases, shapes as well as values (the hidden
tests, with a secret seed that ``make_course.py`` draws for each assignment); ``hidden_test`` runs
one.

To grade a new exercise, add one line to ``SOLVED_BY``: its checker's name and the package objects
(``"module.name"``, functions or classes) that would solve it; ``()`` if none does.
"""

from __future__ import annotations

import contextlib
import importlib
import pkgutil
import sys
from collections.abc import Callable, Iterator, MutableMapping
from typing import Any

import torch

from attention_to_bert.checks import checker as _checker

PACKAGE = "attention_to_bert"

# checker name -> the package objects that solve its exercise ("module.name", under PACKAGE)
SOLVED_BY: dict[str, tuple[str, ...]] = {
    "masked_softmax": ("masks.masked_softmax",),
    "scaled_dot_score": ("attention.scaled_dot_score",),
    # masked_softmax, the lesson of chapter 1, is a building block the solutions use: not blocked
    "top_k_attention": ("attention.attention",),
    "additive_attention": ("attention.AdditiveScore", "attention.attention"),
    "query_gradient": (),  # autograd would solve it; the checker compares with autograd itself
    # lookup.SimilarityWeights is square (d_q = d_k); every case has d_q != d_k
    "train_attention": (),
    "han_attention": ("han.ContextAttention", "attention.attention"),
    "delete_tokens": (),  # the package has no token deletion
    "deciding_sentence_loss": (),  # the package has no such loss
    "similarity_to_row": (),  # the package measures no similarity of states
    "beam_search": ("translator.beam_step",),  # its ranking step
    "luong_step": ("attention.attention", "attention.GeneralScore"),  # its attention part
    "reverse_source": (),  # the package never reverses a source
    "match_by_length": (),  # seq2seq.exact_match scores a whole list, not by length
    "forced_run": (),  # the model is handed over; the run with a given mask is the exercise
    "self_attention": ("attention.attention", "multihead.MultiHeadAttention"),
    "masked_self_attention": ("attention.attention", "multihead.MultiHeadAttention"),
    "rope_half": (),  # nor LLaMA's half-split form
    "window_mask": (),  # the package has no window of offsets
    "positional_encoding": ("positional.PositionalEncoding",),
    "split_heads": ("multihead.split_heads",),
    "causal_mask": ("masks.causal_mask",),
    "multi_head_attention": ("multihead.MultiHeadAttention", "attention.attention"),
    "multi_head_cross_attention": ("multihead.MultiHeadAttention", "attention.attention"),
    "grouped_query_attention": ("attention.attention",),  # with the kv heads repeated
    "kv_cache_bytes": (),
    "cached_decoding": (),  # the checker hands over the layers; the cache is the exercise
    "head_importance": (),  # autograd is the method; the checker compares with autograd itself
    "cross_attention": ("attention.attention", "multihead.MultiHeadAttention"),
    "beam_step": ("translator.beam_step",),
    "pre_ln_encoder_layer": (),  # the package's layers are post-LN only
    "transformer_masks": ("masks.combine_masks",),  # causal_mask is a building block
    "decoder_layer": (),  # the checker builds transformer.DecoderLayer as its reference
    "length_penalty": (),  # the package has no length penalty
    "warmup_schedule": ("translator.noam_schedule",),
    "mlm_mask": ("pretraining.mask_tokens",),
    "pretraining_loss": ("pretraining.pretraining_losses",),  # BERT's recipe (15%, NSP)
    "static_vectors": ("classifier._static_vectors",),  # the fine-tuning baseline
    "static_baseline": ("classifier._choose_c",),  # C chosen on validation
    "sentence_vector": (),  # the checker hands over the pooler's dense layer alone
    "task_heads": (),  # the package has no task heads: chapter 7's Exercise 7.5 writes them
    "pooling": ("classifier.mean_pool",),  # its "mean" half (chapter 7's Exercise 7.6)
    "bert_by_hand": (),  # functions of a state_dict; the package's BERT is modules (Ex 7.7)
}


class PackageAnswerBlocked(RuntimeError):
    """Raised when graded work calls the package's own answer to the exercise being graded."""


def solving_objects(name: str) -> list[tuple[str, Any]]:
    """The package objects that solve the exercise checked by ``checks.name``, as (path, object)."""
    if name not in SOLVED_BY:
        raise ValueError(
            f"name: no entry for checker {name!r} in grading.SOLVED_BY; add one line naming the "
            f"package objects that solve it (known: {', '.join(sorted(SOLVED_BY))})"
        )
    found = []
    for path in SOLVED_BY[name]:
        module, _, attribute = path.rpartition(".")
        found.append((path, getattr(importlib.import_module(f"{PACKAGE}.{module}"), attribute)))
    return found


_SKIPPED = ("torch", "functools", __name__)  # frames between the caller and the guard


def _allowed(frame: Any) -> bool:
    """Whether the call comes from package code that is not a checker (skipping torch's module
    call and functools): package code may use its own parts; student code and checkers may not."""
    while frame is not None:
        module = frame.f_globals.get("__name__", "")
        if not any(module == skip or module.startswith(skip + ".") for skip in _SKIPPED):
            break
        frame = frame.f_back
    module = "" if frame is None else frame.f_globals.get("__name__", "")
    in_package = module == PACKAGE or module.startswith(PACKAGE + ".")
    return in_package and not module.startswith(PACKAGE + ".checks")


def _blocked(real: Callable[..., Any], path: str, exercise: str) -> Callable[..., Any]:
    def guard(*args: Any, **kwargs: Any) -> Any:
        if _allowed(sys._getframe(1)):
            return real(*args, **kwargs)
        raise PackageAnswerBlocked(
            f"graded work may not call the book's own `{PACKAGE}.{path}`: it solves the exercise "
            f"checked by `{exercise}`, which asks you to write it yourself"
        )

    guard.__wrapped__ = real  # type: ignore[attr-defined]
    return guard


def _package_modules() -> list[Any]:
    package = importlib.import_module(PACKAGE)
    names = [info.name for info in pkgutil.walk_packages(package.__path__, PACKAGE + ".")]
    return [importlib.import_module(name) for name in names if ".checks" not in name]


def _patches(
    name: str, namespace: MutableMapping[str, Any]
) -> list[tuple[Any, str, Any, bool, str]]:
    """What to guard: (owner, attribute, real object, owner is a dict, path in SOLVED_BY)."""
    patches = []
    owners = [vars(module) for module in _package_modules()] + [namespace]
    for path, real in solving_objects(name):
        if isinstance(real, type):  # a class: guard building it and calling it
            for method in ("__init__", "forward"):
                if method in vars(real):
                    patches.append((real, method, vars(real)[method], False, path))
            continue
        for owner in owners:
            for key, value in list(owner.items()):
                if value is real:
                    patches.append((owner, key, real, True, path))
    return patches


@contextlib.contextmanager
def package_answer_blocked(name: str, namespace: MutableMapping[str, Any]) -> Iterator[None]:
    """Within the block, every package object that ``SOLVED_BY[name]`` lists raises when student
    code (or a checker, given it as the answer) calls it: functions wherever the package or the
    notebook (``namespace``, its ``globals()``) holds them, classes when built or called."""
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(f"name must be a checker name such as 'causal_mask'; got {name!r}")
    if not isinstance(namespace, MutableMapping):
        raise TypeError(
            f"namespace must be a dict such as globals(); got {type(namespace).__name__}"
        )
    patches = _patches(name, namespace)
    try:
        for owner, attribute, real, is_dict, path in patches:
            guard = _blocked(real, path, name)
            if is_dict:
                owner[attribute] = guard
            else:
                setattr(owner, attribute, guard)
        yield
    finally:
        for owner, attribute, real, is_dict, _ in reversed(patches):
            if is_dict:
                owner[attribute] = real
            else:
                setattr(owner, attribute, real)


@contextlib.contextmanager
def fresh_inputs(seed: int) -> Iterator[None]:
    """Within the block, every ``torch.Generator().manual_seed(s)`` seeds ``s + seed`` and the
    checkers vary their shapes (``checker.vary``): a checker draws other cases, of other sizes,
    than the ones students could see."""
    if isinstance(seed, bool) or not isinstance(seed, int) or seed <= 0:
        raise ValueError(f"seed must be a positive int; got {seed!r}")
    original = torch.Generator

    class ShiftedGenerator(original):  # type: ignore[misc, valid-type]
        def manual_seed(self, value: int) -> torch.Generator:
            return super().manual_seed(value + seed)

    torch.Generator = ShiftedGenerator
    previous = _checker.set_hidden_seed(seed)
    try:
        yield
    finally:
        torch.Generator = original
        _checker.set_hidden_seed(previous)


def graded_test(name: str, answer: Any, namespace: MutableMapping[str, Any]) -> None:
    """The visible graded test: ``checks.name(answer)`` with the package's answers blocked; raises
    AssertionError if it fails (the checker has printed why)."""
    from attention_to_bert import checks

    with package_answer_blocked(name, namespace):
        passed = getattr(checks, name)(answer)
    if not passed:
        raise AssertionError(f"{name}: see the checker's message above")


def hidden_test(name: str, answer: Any, namespace: MutableMapping[str, Any], seed: int) -> None:
    """The hidden test: the same checker on cases drawn with the secret ``seed``."""
    from attention_to_bert import checks

    with package_answer_blocked(name, namespace), fresh_inputs(seed):
        passed = getattr(checks, name)(answer)
    if not passed:
        raise AssertionError(f"{name}: fails on new inputs (hidden test)")
