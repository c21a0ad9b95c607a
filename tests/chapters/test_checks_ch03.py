"""The chapter-3 checkers accept right answers (beam search, match by length, a forced run) and name
the typical mistakes."""

import math

import torch

from attention_to_bert import checks

# Exercise 3.2: beam search. A right answer and typical wrong ones.


def extend(next_log_probs, bos_id, beams, variant):
    """Every extension (total log-probability, tokens) of every prefix in the beam."""
    candidates = []
    for score, tokens in beams:
        log_p = next_log_probs([bos_id, *tokens])
        if variant == "in place":
            log_p += score
            total = log_p
        else:
            total = score + log_p
        candidates += [(value, [*tokens, token]) for token, value in enumerate(total.tolist())]
    return sorted(candidates, key=lambda c: -c[0])


def beam(next_log_probs, bos_id, eos_id, beam_size, max_length, *, variant=""):
    beams, finished = [(0.0, [])], []
    keep = {"greedy": 1, "all": None}.get(variant, beam_size)
    for _ in range(max_length):
        candidates = extend(next_log_probs, bos_id, beams, variant)
        candidates = [c for c in candidates if c[0] > float("-inf")][:keep]
        if variant == "first finished" and any(t[-1] == eos_id for _, t in candidates):
            return next((t, s) for s, t in candidates if t[-1] == eos_id)
        done = variant != "extend finished"
        finished += [(s, t) for s, t in candidates if t[-1] == eos_id and done]
        beams = [(s, t) for s, t in candidates if t[-1] != eos_id or not done]
        if not beams:
            break
    if variant == "normalised":
        finished = [(score / len(tokens), tokens) for score, tokens in finished]
    score, tokens = max(finished or beams, key=lambda c: c[0])
    score = math.exp(score) if variant == "probability" else score
    tokens = {"no eos": tokens[:-1], "with bos": [bos_id, *tokens]}.get(variant, tokens)
    return tokens, score


def beam_with(variant):
    return lambda *args: beam(*args, variant=variant)


def test_beam_search_accepts_a_right_answer(capsys):
    assert checks.beam_search(beam)
    assert "passes all 8 test cases" in capsys.readouterr().out


def test_beam_search_accepts_tensors_and_tensor_prefixes(capsys):
    def with_tensors(next_log_probs, bos_id, eos_id, beam_size, max_length):
        def as_tensor(prefix):
            return next_log_probs(torch.tensor(prefix))

        tokens, score = beam(as_tensor, bos_id, eos_id, beam_size, max_length)
        return torch.tensor(tokens), torch.tensor(score)

    assert checks.beam_search(with_tensors)


def test_beam_search_names_greedy_and_exhaustive_search(capsys):
    assert not checks.beam_search(beam_with("greedy"))
    assert "that is the greedy output" in capsys.readouterr().out
    assert not checks.beam_search(beam_with("all"))
    assert "that is the exhaustive search's answer" in capsys.readouterr().out


def test_beam_search_names_finishing_mistakes(capsys):
    assert not checks.beam_search(beam_with("first finished"))
    out = capsys.readouterr().out
    assert "a poor output finishes first" in out and "finished earlier" in out
    assert not checks.beam_search(beam_with("extend finished"))
    assert "asked next_log_probs to continue the finished" in capsys.readouterr().out


def test_beam_search_names_output_format_mistakes(capsys):
    assert not checks.beam_search(beam_with("no eos"))
    assert "include the final <eos>" in capsys.readouterr().out
    assert not checks.beam_search(beam_with("with bos"))
    assert "not <bos> itself" in capsys.readouterr().out
    assert not checks.beam_search(beam_with("probability"))
    assert "a probability: return its log" in capsys.readouterr().out
    assert not checks.beam_search(beam_with("normalised"))
    assert "divided by the length" in capsys.readouterr().out


def test_beam_search_detects_an_in_place_edit(capsys):
    assert not checks.beam_search(beam_with("in place"))
    assert "changed in place" in capsys.readouterr().out


def test_beam_search_reports_stubs(capsys):
    def stub(next_log_probs, bos_id, eos_id, beam_size, max_length): ...

    assert not checks.beam_search(stub)
    assert "returned None" in capsys.readouterr().out


# Exercise 3.1: Luong's step with input feeding. An independent right answer (torch's own
# modules, float32) and typical wrong ones.


def luong(embedded, feed, state, outputs, mask, cell, w_score, w_c, *, variant=""):
    given = torch.zeros_like(feed) if variant == "no feed" else feed
    new_state = cell(torch.cat([embedded, given], dim=-1), state)
    query = state if variant == "old state" else new_state
    scores = torch.bmm(outputs @ w_score.T, query[:, :, None]).squeeze(-1)
    if variant != "no mask":
        scores = scores.masked_fill(mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    context = torch.bmm(weights[:, None, :], outputs).squeeze(1)
    joined = [new_state, context] if variant == "order" else [context, new_state]
    attentional = torch.nn.functional.linear(torch.cat(joined, dim=-1), w_c)
    if variant != "no tanh":
        attentional = attentional.tanh()
    return attentional, new_state, weights


def luong_with(variant):
    return lambda *args: luong(*args, variant=variant)


def test_luong_step_accepts_a_right_answer(capsys):
    assert checks.luong_step(luong)
    assert "passes all 3 test cases" in capsys.readouterr().out


def test_luong_step_accepts_the_package_general_score():
    from attention_to_bert.attention import attention

    def with_package(embedded, feed, state, outputs, mask, cell, w_score, w_c):
        new_state = cell(torch.cat([embedded, feed], dim=-1), state)
        context, weights = attention(
            new_state[:, None, :],
            outputs @ w_score.T,
            outputs,
            mask[:, None, :],
            score=lambda q, k: q @ k.mT,
        )
        joined = torch.cat([context[:, 0], new_state], dim=-1)
        return torch.tanh(joined @ w_c.T), new_state, weights[:, 0]

    assert checks.luong_step(with_package)


def test_luong_step_names_the_typical_mistakes(capsys):
    for variant, message in [
        ("no feed", "was not fed in"),
        ("old state", "Bahdanau's order"),
        ("order", "the context first"),
        ("no tanh", "the tanh is missing"),
        ("no mask", "must get exactly 0"),
    ]:
        assert not checks.luong_step(luong_with(variant)), variant
        assert message in capsys.readouterr().out, variant


def test_luong_step_changes_sizes_in_a_hidden_test(capsys):
    from attention_to_bert.checks.checker import set_hidden_seed

    def fixed_sizes(embedded, feed, state, outputs, mask, cell, w_score, w_c):
        assert outputs.shape[-1] in (6, 8, 4), "fitted to the visible sizes"
        return luong(embedded, feed, state, outputs, mask, cell, w_score, w_c)

    assert checks.luong_step(fixed_sizes)
    previous = set_hidden_seed(5)
    try:
        assert checks.luong_step(luong)
        assert not checks.luong_step(fixed_sizes)
    finally:
        set_hidden_seed(previous)


def test_luong_step_reports_stubs(capsys):
    assert not checks.luong_step(lambda *args: None)
    assert "returned None" in capsys.readouterr().out


# Exercise 3.3: reversing the real ids of a padded batch.


def reverse(source, lengths):
    rows = []
    for row, length in zip(source, lengths.tolist(), strict=True):
        rows.append(torch.cat([row[:length].flip(0), row[length:]]))
    return torch.stack(rows)


def test_reverse_source_accepts_a_right_answer(capsys):
    assert checks.reverse_source(reverse)
    assert "passes all 3 test cases" in capsys.readouterr().out


def test_reverse_source_accepts_a_vectorised_answer():
    def gather(source, lengths):
        positions = torch.arange(source.shape[1])
        flipped = lengths[:, None] - 1 - positions
        index = torch.where(flipped >= 0, flipped, positions)
        return source.gather(1, index)

    assert checks.reverse_source(gather)


def test_reverse_source_names_the_typical_mistakes(capsys):
    assert not checks.reverse_source(lambda source, lengths: source.flip(1))
    assert "padding moved to the left" in capsys.readouterr().out
    assert not checks.reverse_source(lambda source, lengths: source.clone())
    assert "nothing was reversed" in capsys.readouterr().out

    def in_place(source, lengths):
        for row, length in enumerate(lengths.tolist()):
            source[row, :length] = source[row, :length].flip(0).clone()
        return source

    assert not checks.reverse_source(in_place)
    assert "in place" in capsys.readouterr().out


def test_reverse_source_changes_sizes_in_a_hidden_test():
    from attention_to_bert.checks.checker import set_hidden_seed

    def fixed_width(source, lengths):
        assert source.shape[1] == 7, "fitted to the visible width"
        return reverse(source, lengths)

    assert checks.reverse_source(fixed_width)
    previous = set_hidden_seed(3)
    try:
        assert not checks.reverse_source(fixed_width)
    finally:
        set_hidden_seed(previous)


# Exercise 3.3 (b): exact match by source length.


def match_by_length(predicted, pairs, string_lengths, *, variant=""):
    shares = []
    for n in string_lengths:
        group = [
            (prediction, source, target)
            for prediction, (source, target) in zip(predicted, pairs, strict=True)
            if len(target if variant == "target length" else source) == n
        ]
        right = sum(p == (s if variant == "source" else t) for p, s, t in group)
        shares.append(right if variant == "counts" else right / max(len(group), 1))
    return torch.tensor(shares) if variant == "tensor" else shares


def test_match_by_length_accepts_lists_and_tensors(capsys):
    assert checks.match_by_length(match_by_length)
    assert "passes all 3 test cases" in capsys.readouterr().out
    assert checks.match_by_length(lambda *args: match_by_length(*args, variant="tensor"))


def test_match_by_length_names_the_typical_mistakes(capsys):
    for variant, message in [
        ("source", "compared with the source"),
        ("target length", "grouped by the target's length"),
        ("counts", "counts, not shares"),
    ]:
        assert not checks.match_by_length(
            lambda *args, v=variant: match_by_length(*args, variant=v)
        )
        assert message in capsys.readouterr().out, variant


def test_match_by_length_wants_the_order_asked_for(capsys):
    def sorted_lengths(predicted, pairs, string_lengths):
        return match_by_length(predicted, pairs, sorted(string_lengths))

    assert not checks.match_by_length(sorted_lengths)
    assert "string_lengths in another order" in capsys.readouterr().out


# Exercise 3.4: a teacher-forced run with a given source mask.


def forced_run(model, source, lengths, target, mask, *, variant=""):
    outputs, final, padding = model.encode(source, lengths)
    used = padding if variant == "own mask" else mask
    logits, alpha = model.decoder(target[:, :-1], outputs, final, used)
    real = target[:, 1:] != 0
    on_padding = (alpha * padding[:, None, :]).sum(-1)
    if variant == "all steps":
        on_padding = on_padding.mean(-1)
    else:
        on_padding = (on_padding * real).sum(-1) / real.sum(-1)
    hits = logits.argmax(-1) == target[:, 1:]
    right = hits.all(-1) if variant == "pad wrong" else (hits | ~real).all(-1)
    return on_padding, right


def test_forced_run_accepts_a_right_answer(capsys):
    assert checks.forced_run(forced_run)
    assert "passes all 2 test cases" in capsys.readouterr().out


def test_forced_run_names_the_typical_mistakes(capsys):
    for variant, message in [
        ("own mask", "the model's own padding mask"),
        ("all steps", "the mean runs over every target step"),
        ("pad wrong", "a padded target step counts as a wrong character"),
    ]:
        assert not checks.forced_run(lambda *args, v=variant: forced_run(*args, variant=v))
        assert message in capsys.readouterr().out, variant


def test_forced_run_changes_sizes_in_a_hidden_test():
    from attention_to_bert.checks.checker import set_hidden_seed

    def fixed_width(model, source, lengths, target, mask):
        assert source.shape[1] == 7, "fitted to the visible width"
        return forced_run(model, source, lengths, target, mask)

    assert checks.forced_run(fixed_width)
    previous = set_hidden_seed(3)
    try:
        assert not checks.forced_run(fixed_width)
    finally:
        set_hidden_seed(previous)
