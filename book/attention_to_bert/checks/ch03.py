"""The checkers of chapter 3: Luong's step with input feeding (exercise 3.1), beam search (exercise
3.2), reversing the sources of a padded batch and exact match by length (exercise 3.3), a
teacher-forced run with a given source mask (exercise 3.4)."""

from __future__ import annotations

import copy
import math
from collections.abc import Callable
from typing import Any

import torch

from attention_to_bert.checks.checker import Checker, vary

# ---------------------------------------------------------------------------------------------------
# Exercise 3.2: beam search

BOS_ID, EOS_ID = 1, 2  # the toy vocabularies below: 0 <pad>, 1 <bos>, 2 <eos>, 3.. symbols


class _Tree:
    """A toy language model: ``tree(prefix)`` gives the log-probabilities of the next token.

    ``table`` maps a prefix (a tuple of token ids after <bos>) to its next-token probabilities; a
    prefix that is not in it gets ``default(prefix)``. The tensors handed out are the stored ones,
    so that an in-place edit by the caller shows; ``calls`` records the prefixes asked for.
    """

    def __init__(self, table: dict[tuple[int, ...], list[float]], vocab: int, default=None) -> None:
        self.vocab, self.default = vocab, default
        self.table = {prefix: self._log(p) for prefix, p in table.items()}
        self.calls: list[tuple[int, ...]] = []
        self.max_length: int | None = None  # set while a student's search runs

    def _log(self, probabilities: list[float]) -> torch.Tensor:
        """The log of ``probabilities``, padded with zeros (ids never drawn) to ``vocab`` entries."""
        padded = [*probabilities, *[0.0] * (self.vocab - len(probabilities))]
        return torch.tensor(padded, dtype=torch.float64).log()

    def __call__(self, prefix: Any) -> torch.Tensor:
        if isinstance(prefix, torch.Tensor):
            prefix = prefix.tolist()
        prefix = tuple(int(token) for token in prefix)
        if not prefix or prefix[0] != BOS_ID:
            raise ValueError(f"a prefix must start with <bos> (id {BOS_ID}), got {list(prefix)}")
        self.calls.append(prefix[1:])
        if self.max_length is not None and len(prefix) - 1 >= self.max_length:
            raise ValueError(
                f"asked for the token after {len(prefix) - 1} tokens, but max_length="
                f"{self.max_length}: stop after max_length steps (an output, <eos> included, has "
                "at most max_length tokens)"
            )
        if self.max_length is not None and len(self.calls) > 2000:  # a student's search
            raise RuntimeError(
                "more than 2000 calls to next_log_probs: keep only beam_size prefixes a step"
            )
        if prefix[1:] not in self.table:
            self.table[prefix[1:]] = self._log(self.default(prefix[1:]))
        return self.table[prefix[1:]]

    def pristine(self) -> dict[tuple[int, ...], torch.Tensor]:
        return {prefix: log_p.clone() for prefix, log_p in self.table.items()}


def _one_hot(vocab: int, token: int) -> list[float]:
    return [1.0 if i == token else 0.0 for i in range(vocab)]


def _random_tree(seed: int, depth: int, symbols: int, early: bool = False) -> _Tree:
    """Every output has ``depth`` symbols, then <eos>; the symbol probabilities are random. With
    ``early``, <eos> may also come after fewer symbols (a random share, often a large one), so
    that outputs finish at different steps."""
    vocab = 3 + symbols

    def default(prefix: tuple[int, ...]) -> list[float]:
        if len(prefix) == depth:
            return _one_hot(vocab, EOS_ID)
        generator = torch.Generator().manual_seed(seed * 1_000_003 + hash(prefix) % 1_000_003)
        p = torch.rand(symbols, generator=generator, dtype=torch.float64) ** 2 + 0.05
        stop = 0.0
        if early and prefix:
            stop = float(torch.rand((), generator=generator, dtype=torch.float64)) ** 2
        return [0.0, 0.0, stop, *((1 - stop) * p / p.sum()).tolist()]

    return _Tree({}, vocab, default)


def _search(
    tree: _Tree, beam_size: int | None, max_length: int, finished_in_beam: bool = False
) -> tuple[list[int], float]:
    """Beam search (``beam_size=None``: every prefix, an exhaustive search) over a fresh copy.
    ``finished_in_beam`` makes a typical mistake: finished outputs stay in the beam, take a place
    there and drop out when ``beam_size`` better prefixes come; the final beam is searched."""
    fresh = _Tree({}, tree.vocab, lambda prefix: tree(tuple([BOS_ID, *prefix])).exp().tolist())
    beams: list[tuple[float, list[int]]] = [(0.0, [])]
    finished: list[tuple[float, list[int]]] = []
    for _ in range(max_length):
        candidates = []
        for score, tokens in beams:
            if tokens and tokens[-1] == EOS_ID:  # only with finished_in_beam
                candidates.append((score, tokens))
                continue
            log_p = fresh([BOS_ID, *tokens])
            for token in range(tree.vocab):
                if log_p[token] > float("-inf"):
                    candidates.append((score + log_p[token].item(), [*tokens, token]))
        candidates.sort(key=lambda candidate: -candidate[0])
        beams = []
        for score, tokens in candidates[: beam_size or len(candidates)]:
            done = tokens[-1] == EOS_ID and not finished_in_beam
            (finished if done else beams).append((score, tokens))
        if all(tokens[-1] == EOS_ID for _, tokens in beams):
            break
    if finished_in_beam:
        finished = [beam for beam in beams if beam[1][-1] == EOS_ID]
        beams = [beam for beam in beams if beam[1][-1] != EOS_ID]
    best = max(finished or beams, key=lambda candidate: candidate[0])
    return best[1], best[0]


def _as_tokens(tokens: Any) -> list[int] | None:
    if isinstance(tokens, torch.Tensor):
        tokens = tokens.tolist()
    if isinstance(tokens, list | tuple) and all(isinstance(t, int) for t in tokens):
        return list(tokens)
    return None


def _as_number(value: Any) -> float | None:
    if isinstance(value, torch.Tensor) and value.numel() == 1:
        value = value.item()
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return None


def _beam_cases() -> list[tuple[str, _Tree, int, int]]:
    """(case, toy model, beam_size, max_length); in a hidden test (``vary``) the vocabularies grow
    (ids that are never drawn) and so do the random trees and their outputs."""
    (vocab,) = vary(5)  # <pad> <bos> <eos> a=3 b=4, then ids of probability 0
    a, b = 3, 4
    # section 3.8's example: greedy picks a a a (0.6^3 = 0.216), the best output is b b b (0.4)
    greedy_trap = {(): [0, 0, 0, 0.6, 0.4]}
    for prefix in [(a,), (a, a)]:
        greedy_trap[prefix] = [0, 0, 0, 0.6, 0.4]
    for prefix in [(b,), (b, b)]:
        greedy_trap[prefix] = _one_hot(vocab, b)
    stop = lambda prefix: _one_hot(vocab, EOS_ID)  # noqa: E731 (a default: stop)
    # a poor output finishes first: a <eos> (0.6 * 0.5 = 0.3) before b b <eos> (0.4)
    early = {(): [0, 0, 0, 0.6, 0.4], (a,): [0, 0, 0.5, 0.3, 0.2], (b,): _one_hot(vocab, b)}
    # stopping at once is best: <eos> (0.3); a a and a b (0.35 each) push it out of a beam of 2
    # but then end lower (a a <eos> 0.14, a a a <eos> 0.21, ...)
    short = {
        (): [0, 0, 0.3, 0.7, 0],
        (a,): [0, 0, 0, 0.5, 0.5],
        (a, a): [0, 0, 0.4, 0.6, 0],
        (a, b): [0, 0, 0.4, 0, 0.6],
    }
    # one more symbol and one more step at most: the exhaustive search below must stay cheap
    symbols, depth = vary(3, 5, spread=1)
    wide_symbols, wide_depth = vary(4, 4, spread=1)
    (long_depth,) = vary(5, spread=1)
    return [
        (
            "section 3.8's example (0.6, 0.6, 0.6 against 0.4, 1, 1), beam_size=2",
            _Tree(greedy_trap, vocab, stop),
            2,
            6,
        ),
        (
            "section 3.8's example, beam_size=1 (greedy decoding)",
            _Tree(greedy_trap, vocab, stop),
            1,
            6,
        ),
        ("a poor output finishes first, beam_size=2", _Tree(early, vocab, stop), 2, 6),
        ("<eos> at once is the best output, beam_size=2", _Tree(short, vocab, stop), 2, 6),
        (
            f"a random tree, {symbols} symbols, outputs of {depth}, beam_size=2",
            _random_tree(7, depth, symbols),
            2,
            depth + 3,
        ),
        (
            f"a random tree, {wide_symbols} symbols, outputs of 1 to {wide_depth} (<eos> may "
            "come early), beam_size=3",
            _random_tree(2, wide_depth, wide_symbols, early=True),
            3,
            wide_depth + 4,
        ),
        (
            f"outputs of {long_depth} symbols and <eos>, max_length={long_depth + 1} (just long "
            "enough), beam_size=2",
            _random_tree(11, long_depth, 3),
            2,
            long_depth + 1,
        ),
        (
            "a model that never says <eos>, max_length=4: the best unfinished prefix, beam_size=2",
            _Tree({}, vocab, lambda prefix: [0, 0, 0, 0.55, 0.45]),
            2,
            4,
        ),
    ]


def beam_search(candidate: Callable[..., Any]) -> bool:
    """Check ``candidate(next_log_probs, bos_id, eos_id, beam_size, max_length) -> (tokens,
    log_prob)``: the most probable finished output that a beam of ``beam_size`` prefixes finds
    (``tokens`` after <bos>, <eos> included) and its total log-probability."""
    checker = Checker("beam_search")
    for case, tree, beam_size, max_length in _beam_cases():
        expected, expected_log_p = _search(tree, beam_size, max_length)
        best, best_log_p = _search(tree, None, max_length)
        greedy, _ = _search(tree, 1, max_length)
        pushed_out, _ = _search(tree, beam_size, max_length, finished_in_beam=True)
        tree.calls.clear()  # the searches above asked too
        before = tree.pristine()
        tree.max_length = max_length
        result = checker.call(
            candidate,
            tree,
            BOS_ID,
            EOS_ID,
            beam_size,
            max_length,
            case=case,
            pair="(tokens, log_prob)",
        )
        if result is None:
            continue
        tokens, log_p = _as_tokens(result[0]), _as_number(result[1])
        if tokens is None or log_p is None:
            got = f"{type(result[0]).__name__} and {type(result[1]).__name__}"
            checker.expect(False, f"{case}: expected a list of ints and a number, got {got}")
            continue
        changed = any(not torch.equal(tree.table[prefix], before[prefix]) for prefix in before)
        if not checker.expect(
            not changed,
            f"{case}: the log-probabilities returned by next_log_probs were changed in place "
            "(such as `log_p += score`): add into a new tensor (`score + log_p`)",
        ):
            continue
        after_eos = [prefix for prefix in tree.calls if EOS_ID in prefix]
        if after_eos:
            prefix = [BOS_ID, *after_eos[0]]
            checker.expect(False, f"{case}: asked next_log_probs to continue the finished {prefix}")
        elif tokens != expected:
            mistake = _name_beam_mistake(tokens, expected, best, greedy, max_length)
            if tokens == pushed_out:
                mistake = (
                    f"got {tokens}, expected {expected}: a finished output was pushed out of the "
                    "beam by better unfinished prefixes and lost; set each finished output aside "
                    "(it leaves the beam, which keeps beam_size unfinished prefixes) and return "
                    "the best of them"
                )
            checker.expect(False, f"{case}: {mistake}")
        elif abs(log_p - expected_log_p) > 1e-6:
            hint = ""
            if abs(log_p - math.exp(expected_log_p)) < 1e-6:
                hint = " (a probability: return its log, the sum of the log-probabilities)"
            elif abs(log_p * len(tokens) - expected_log_p) < 1e-6:
                hint = " (divided by the length: return the plain sum of the log-probabilities)"
            checker.expect(
                False,
                f"{case}: the right tokens, but log_prob {log_p:.6g}, expected "
                f"{expected_log_p:.6g}{hint}",
            )
    return checker.report()


def _name_beam_mistake(
    tokens: list[int], expected: list[int], best: list[int], greedy: list[int], max_length: int
) -> str:
    """Say what kind of wrong output ``tokens`` is."""
    got, want = f"got {tokens}, expected {expected}", ""
    unfinished = not tokens or tokens[-1] != EOS_ID
    if tokens and tokens[0] == BOS_ID:
        want = "return the tokens after <bos>, not <bos> itself"
    elif tokens == expected[:-1]:
        want = "include the final <eos> in the tokens"
    elif tokens[-1:] == [EOS_ID] and len(tokens) < len(expected):
        want = (
            "an output that finished earlier, not the best one: go on while the beam holds "
            "unfinished prefixes, then return the most probable finished output"
        )
    elif unfinished and len(tokens) < min(len(expected), max_length) and EOS_ID not in tokens:
        want = (
            f"the search stopped after {len(tokens)} steps: take up to max_length={max_length} "
            "steps (range(max_length))"
        )
    elif tokens == greedy != expected:
        want = "that is the greedy output: keep the beam_size best prefixes at every step"
    elif tokens == best != expected:
        want = "that is the exhaustive search's answer: keep only beam_size prefixes a step"
    elif EOS_ID in tokens[:-1]:
        want = "tokens continue after <eos>: a finished output must not be extended"
    elif not tokens or tokens[-1] != EOS_ID:
        want = "an unfinished output: finish the search (every output ends with <eos>)"
    else:
        want = (
            "keep the beam_size best of all the extensions of all the prefixes, ranked by the "
            "total log-probability of the prefix; return the best finished output"
        )
    return f"{got}: {want}"


# ---------------------------------------------------------------------------------------------------
# Exercise 3.1: Luong's decoding step, with input feeding


def _luong_reference(
    embedded: torch.Tensor,
    feed: torch.Tensor,
    state: torch.Tensor,
    outputs: torch.Tensor,
    mask: torch.Tensor,
    cell: torch.nn.GRUCell,
    w_score: torch.Tensor,
    w_c: torch.Tensor,
    *,
    mistake: str = "",
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Luong et al.'s step (general score, input feeding) in float64; ``mistake`` makes a typical
    wrong one: ``"old state"`` (attend with s_{t-1}, Bahdanau's order), ``"no tanh"``,
    ``"order"`` ([s_t; c_t] instead of [c_t; s_t]), ``"no feed"`` (the previous attentional state
    replaced by zeros)."""
    double = copy.deepcopy(cell).double()  # the student's cell stays float32
    given = torch.zeros_like(feed) if mistake == "no feed" else feed
    new_state = double(torch.cat([embedded, given], dim=-1).double(), state.double())
    query = state.double() if mistake == "old state" else new_state
    scores = torch.einsum("bd,de,bje->bj", query, w_score.double(), outputs.double())
    weights = torch.nan_to_num(torch.softmax(scores.masked_fill(mask, float("-inf")), -1), nan=0.0)
    context = (weights[:, :, None] * outputs.double()).sum(dim=1)
    joined = [new_state, context] if mistake == "order" else [context, new_state]
    attentional = torch.cat(joined, dim=-1) @ w_c.double().T
    if mistake != "no tanh":
        attentional = torch.tanh(attentional)
    return attentional, new_state, weights


def luong_step(candidate: Callable[..., Any]) -> bool:
    """Check ``candidate(embedded, feed, state, encoder_outputs, mask, cell, w_score, w_c) ->
    (attentional, state, weights)``: Luong et al.'s step with the general score and input feeding,

    s_t = cell([E'y_{t-1}; s~_{t-1}], s_{t-1}),  a_tj = softmax_j(s_t^T W h_j) (0 where masked),
    c_t = sum_j a_tj h_j,  s~_t = tanh(W_c [c_t; s_t]).

    Float32 inputs, as a model's; compared in float64 within 1e-5."""
    checker = Checker("luong_step")
    generator = torch.Generator().manual_seed(31)
    cases = [  # (case, lengths, embedding size, state size): sizes grow in a hidden test
        ("no padding", [*vary(5)] * 3, *vary(4, 6)),
        ("sources of different lengths", [*vary(6), 4, 1], *vary(3, 8)),
        ("one sentence", [*vary(7)], *vary(5, 4)),
    ]
    for case, lengths, embedding_size, size in cases:
        batch, source_len = len(lengths), max(lengths)
        mask = torch.arange(source_len) >= torch.tensor(lengths)[:, None]
        with torch.random.fork_rng():
            torch.manual_seed(int(torch.randint(0, 2**31, (), generator=generator)))
            cell = torch.nn.GRUCell(embedding_size + size, size)
        outputs = torch.randn(batch, source_len, size, generator=generator)
        outputs = outputs.masked_fill(mask[:, :, None], 0.0)
        embedded = torch.randn(batch, embedding_size, generator=generator)
        feed = torch.tanh(torch.randn(batch, size, generator=generator))
        state = torch.tanh(torch.randn(batch, size, generator=generator))
        w_score = torch.randn(size, size, generator=generator) / size**0.5
        w_c = torch.randn(size, 2 * size, generator=generator) / size**0.5
        arguments = (embedded, feed, state, outputs, mask, cell, w_score, w_c)
        result = checker.call(candidate, *arguments, case=case)
        if result is None:
            continue
        if not isinstance(result, tuple | list) or len(result) != 3:
            checker.expect(False, f"{case}: return three tensors (attentional, state, weights)")
            continue
        expected = _luong_reference(*arguments)
        wrong = {m: _luong_reference(*arguments, mistake=m) for m in MISTAKES}
        if not checker.compare(
            result[1],
            expected[1],
            f"{case}: state",
            [(wrong["no feed"][1], MISTAKES["no feed"])],
        ):
            continue
        if not checker.compare(
            result[2],
            expected[2],
            f"{case}: weights",
            [(wrong["old state"][2], MISTAKES["old state"])],
            masked=mask,
        ):
            continue
        checker.compare(
            result[0],
            expected[0],
            f"{case}: attentional",
            [(wrong[m][0], MISTAKES[m]) for m in ("order", "no tanh")],
        )
    return checker.report()


MISTAKES = {
    "no feed": "the previous attentional state s~_{t-1} was not fed in: the cell reads "
    "[E'y_{t-1}; s~_{t-1}] (input feeding)",
    "old state": "these are the weights of the previous state s_{t-1} (Bahdanau's order): Luong "
    "et al. update the state first, then attend with the new s_t",
    "order": "W_c multiplies [s_t; c_t]; Luong et al. join [c_t; s_t], the context first",
    "no tanh": "the tanh is missing: s~_t = tanh(W_c [c_t; s_t])",
}


# ---------------------------------------------------------------------------------------------------
# Exercise 3.3: reversing the sources of a padded batch


def reverse_source(candidate: Callable[..., Any]) -> bool:
    """Check ``candidate(source, lengths) -> reversed``: each row's first ``lengths[i]`` ids in
    reverse order, the padding (id 0) left where it was, on the right; ``source`` unchanged."""
    checker = Checker("reverse_source")
    generator = torch.Generator().manual_seed(33)
    (longest,) = vary(7)
    cases = [  # (case, lengths)
        ("every row as long", [longest] * 3),
        ("rows of different lengths", [longest, 3, 1, longest - 2]),
        ("an empty row", [2, 0, longest]),
    ]
    for case, lengths in cases:
        lengths_t = torch.tensor(lengths)
        padded = torch.arange(max(lengths)) >= lengths_t[:, None]
        source = torch.randint(3, 20, padded.shape, generator=generator).masked_fill(padded, 0)
        expected = source.clone()
        for row, length in enumerate(lengths):
            expected[row, :length] = source[row, :length].flip(0)
        result = checker.call(candidate, source, lengths_t, case=case)
        if result is None:
            continue
        if isinstance(result, torch.Tensor) and result.dtype != source.dtype:
            checker.expect(
                False, f"{case}: expected ids of dtype {source.dtype}, got {result.dtype}"
            )
            continue
        mistakes = [
            (source.flip(1), "the padding moved to the left: reverse only the real ids of a row"),
            (source, "nothing was reversed"),
        ]
        checker.compare(result, expected, case, mistakes, atol=0.0)
    return checker.report()


# ---------------------------------------------------------------------------------------------------
# Exercise 3.3 (b): exact match by source length


def _shares(predicted: list[str], pairs: list[tuple[str, str]], lengths: list[int], how: str = ""):
    """Share right per length (``how``: ``"source"`` compares with the source, ``"target length"``
    groups by the target's length, ``"counts"`` counts instead of dividing)."""
    shares = []
    for n in lengths:
        group = [
            (p, s, t)
            for p, (s, t) in zip(predicted, pairs, strict=True)
            if len(t if how == "target length" else s) == n
        ]
        right = sum(p == (s if how == "source" else t) for p, s, t in group)
        shares.append(float(right) if how == "counts" else right / max(len(group), 1))
    return torch.tensor(shares, dtype=torch.float64)


def match_by_length(candidate: Callable[..., Any]) -> bool:
    """Check ``candidate(predicted, pairs, string_lengths) -> shares``: for each length ``n`` of
    ``string_lengths``, in that order, the share of the ``(source, target)`` pairs whose source has
    ``n`` characters and whose prediction equals the target (a list of floats or a tensor)."""
    checker = Checker("match_by_length")
    draw = torch.Generator().manual_seed(34)
    (count,) = vary(60, spread=20)

    def text(length: int, symbols: str) -> str:
        picks = torch.randint(0, len(symbols), (length,), generator=draw).tolist()
        return "".join(symbols[i] for i in picks)

    def guess(target: str) -> str:  # right about half the time, else one symbol changed
        if torch.rand((), generator=draw) < 0.5 or not target:
            return target
        return ("x" if target[0] != "x" else "y") + target[1:]

    cases = []
    digits = [
        text(int(torch.randint(2, 7, (), generator=draw)), "0123456789") for _ in range(count)
    ]
    cases.append(
        ("digit strings and their reversals", [(s, s[::-1]) for s in digits], [2, 3, 4, 5, 6])
    )
    dates = [text(int(torch.randint(3, 7, (), generator=draw)), "abc/ .") for _ in range(count)]
    dated = [(s, text(4, "0123456789")) for s in dates]
    cases.append(
        ("targets as long as each other, sources of 3 to 6 characters", dated, [3, 4, 5, 6])
    )
    cases.append(("string_lengths in another order", [(s, s[::-1]) for s in digits], [6, 2, 4]))
    for case, pairs, lengths in cases:
        predicted = [guess(t) for _, t in pairs]
        result = checker.call(candidate, list(predicted), list(pairs), list(lengths), case=case)
        if result is None:
            continue
        try:
            shares = torch.as_tensor(
                [float(v) for v in result] if not isinstance(result, torch.Tensor) else result
            )
        except (TypeError, ValueError):
            checker.expect(False, f"{case}: expected a list of numbers, got {result!r:.80}")
            continue
        mistakes = [
            (
                _shares(predicted, pairs, lengths, "source"),
                "compared with the source; compare each prediction with its target",
            ),
            (
                _shares(predicted, pairs, lengths, "target length"),
                "grouped by the target's length; group by the source's",
            ),
            (
                _shares(predicted, pairs, lengths, "counts"),
                "counts, not shares: divide by the number of pairs of that length",
            ),
        ]
        checker.compare(shares, _shares(predicted, pairs, lengths), case, mistakes)
    return checker.report()


# ---------------------------------------------------------------------------------------------------
# Exercise 3.4: a teacher-forced run with a given source mask


def _forced_reference(model, source, lengths, target, mask, mistake: str = ""):
    """Per row: the mean weight on the source padding over the real target steps, and whether every
    real target character is predicted. ``mistake``: ``"own mask"`` (the model's padding mask, not
    ``mask``), ``"all steps"`` (the mean over every step, padding included) or ``"pad wrong"``
    (padding steps counted as wrong)."""
    with torch.no_grad():
        outputs, final, padding = model.encode(source, lengths)
        used = padding if mistake == "own mask" else mask
        logits, weights = model.decoder(target[:, :-1], outputs, final, used)
    real = target[:, 1:] != 0
    on_padding = (weights * padding[:, None, :]).sum(-1).double()
    if mistake == "all steps":
        on_padding = on_padding.mean(-1)
    else:
        on_padding = (on_padding * real).sum(-1) / real.sum(-1)
    hits = logits.argmax(-1) == target[:, 1:]
    right = hits.all(-1) if mistake == "pad wrong" else (hits | ~real).all(-1)
    return on_padding, right


def forced_run(candidate: Callable[..., Any]) -> bool:
    """Check ``candidate(model, source, lengths, target, mask) -> (on_padding, right)``: run
    ``model`` (a ``Seq2Seq``) with teacher forcing on a padded batch (``target`` framed as
    ``<bos> ... <eos>``, padded with 0), passing ``mask`` to ``model.decoder`` as the source mask;
    per row, ``on_padding`` is the mean weight on the source's padding over the row's real target
    characters and ``right`` whether every real target character is the argmax."""
    from attention_to_bert.data import Vocabulary
    from attention_to_bert.seq2seq import Seq2Seq, greedy_decode

    checker = Checker("forced_run")
    draw = torch.Generator().manual_seed(35)
    vocab = Vocabulary("abcdef")
    (longest,) = vary(7)
    with torch.random.fork_rng():
        torch.manual_seed(35)
        model = Seq2Seq(vocab, vocab, score="additive", embedding_size=4, hidden_size=6)
    lengths = torch.tensor([longest, 2, longest - 2, 1, 4, longest])
    padding = torch.arange(longest) >= lengths[:, None]
    first, last = vocab.stoi["a"], vocab.stoi["f"]
    source = torch.randint(first, last + 1, padding.shape, generator=draw).masked_fill(padding, 0)
    with torch.no_grad():  # a model that stops early: its outputs leave padding steps
        model.decoder.output.bias[model.eos_id] += 1.0
    tokens, _ = greedy_decode(model, source, max_length=5)  # right under teacher forcing
    bos = torch.full((len(source), 1), model.bos_id)
    target = torch.cat([bos, tokens, torch.zeros_like(tokens[:, :3])], dim=1)
    target[0, 1:-1], target[0, -1] = first, model.eos_id  # one long output, wrong
    for row in (1, 4):  # two rows with a wrong first character
        target[row, 1] = first if target[row, 1] != first else first + 1
    cases = [
        ("the padding mask", padding),
        ("no mask: False everywhere", torch.zeros_like(padding)),
    ]
    for case, mask in cases:
        arguments = (model, source, lengths, target, mask)
        result = checker.call(candidate, *arguments, case=case, pair="(on_padding, right)")
        if result is None:
            continue
        on_padding, right = _forced_reference(*arguments)
        wrong = {m: _forced_reference(*arguments, mistake=m) for m in FORCED_MISTAKES}
        if not checker.compare(
            result[0],
            on_padding,
            f"{case}: on_padding",
            [(wrong[m][0], FORCED_MISTAKES[m]) for m in ("own mask", "all steps")],
        ):
            continue
        given = result[1]
        if isinstance(given, torch.Tensor) and given.dtype == torch.bool:
            given = given.double()
        checker.compare(
            given,
            right.double(),
            f"{case}: right",
            [(wrong["pad wrong"][1].double(), FORCED_MISTAKES["pad wrong"])],
            atol=0.0,
        )
    return checker.report()


FORCED_MISTAKES = {
    "own mask": "these are the weights with the model's own padding mask: pass `mask` to "
    "model.decoder(target[:, :-1], outputs, final, mask)",
    "all steps": "the mean runs over every target step, the padding included: average over the "
    "real target characters only (target[:, 1:] != 0)",
    "pad wrong": "a padded target step counts as a wrong character: judge the real characters only",
}
