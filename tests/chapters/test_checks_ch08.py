"""The chapter 8 checker accepts a right pre-training loss (with its two switches: the share of
tokens masked, and NSP on or off) and catches typical wrong ones; it draws other sizes in a hidden
test and leaves the global random state alone."""

import torch
import torch.nn.functional as F
from grading import fresh_inputs

from attention_to_bert import checks, pretraining


def right(model, batch, mask_id, generator, probability, nsp):
    vocab_size = model.bert.config.vocab_size
    inputs, labels = pretraining.mask_tokens(
        batch["input_ids"], batch["special"], mask_id, vocab_size, generator, probability
    )
    chosen = labels != -100
    mlm, next_logits = model(inputs, batch["token_type_ids"], batch["attention_mask"], chosen)
    loss = F.cross_entropy(mlm, labels[chosen])
    if nsp:
        loss = loss + F.cross_entropy(next_logits, batch["nsp_labels"])
    return loss


def every_position(model, batch, mask_id, generator, probability, nsp):
    """Right too: scores at every position, the unchosen ones skipped by ignore_index=-100."""
    vocab_size = model.bert.config.vocab_size
    inputs, labels = pretraining.mask_tokens(
        batch["input_ids"], batch["special"], mask_id, vocab_size, generator, probability
    )
    mlm, next_logits = model(inputs, batch["token_type_ids"], batch["attention_mask"])
    loss = F.cross_entropy(mlm.flatten(0, 1), labels.flatten())
    pairs = batch["nsp_labels"] != -100
    return loss + F.cross_entropy(next_logits[pairs], batch["nsp_labels"][pairs]) if nsp else loss


def always_nsp(model, batch, mask_id, generator, probability, nsp):
    return right(model, batch, mask_id, generator, probability, True)


def never_nsp(model, batch, mask_id, generator, probability, nsp):
    return right(model, batch, mask_id, generator, probability, False)


def fixed_rate(model, batch, mask_id, generator, probability, nsp):
    return right(model, batch, mask_id, generator, 0.15, nsp)


def global_draws(model, batch, mask_id, generator, probability, nsp):
    return right(model, batch, mask_id, torch.Generator().manual_seed(0), probability, nsp)


def averaged(model, batch, mask_id, generator, probability, nsp):
    loss = right(model, batch, mask_id, generator, probability, nsp)
    return loss / 2 if nsp else loss


def no_attention_mask(model, batch, mask_id, generator, probability, nsp):
    return right(model, {**batch, "attention_mask": None}, mask_id, generator, probability, nsp)


def no_token_types(model, batch, mask_id, generator, probability, nsp):
    return right(model, {**batch, "token_type_ids": None}, mask_id, generator, probability, nsp)


def detached(model, batch, mask_id, generator, probability, nsp):
    return right(model, batch, mask_id, generator, probability, nsp).detach()


def as_float(model, batch, mask_id, generator, probability, nsp):
    return right(model, batch, mask_id, generator, probability, nsp).item()


def in_place(model, batch, mask_id, generator, probability, nsp):
    batch["input_ids"][:, 1] = mask_id
    return right(model, batch, mask_id, generator, probability, nsp)


def stub(model, batch, mask_id, generator, probability, nsp):
    return None


def test_accepts_right_answers(capsys):
    for answer in (right, every_position):
        assert checks.pretraining_loss(answer), answer.__name__
        assert "passes all 4 test cases" in capsys.readouterr().out


def test_catches_typical_wrong_answers(capsys):
    expectations = {
        always_nsp: "the NSP loss is added although nsp=False",
        never_nsp: "the NSP loss is missing",
        fixed_rate: "the masks ignore `probability`",
        global_draws: "called once with the generator given",
        averaged: "the two losses are averaged",
        no_attention_mask: "without batch['attention_mask']",
        no_token_types: "without batch['token_type_ids']",
        detached: "one number that backpropagates",
        as_float: "expected a torch.Tensor, got float",
        in_place: "the input `batch` was modified in place",
        stub: "returned None",
    }
    for wrong, message in expectations.items():
        assert not checks.pretraining_loss(wrong), wrong.__name__
        assert message in capsys.readouterr().out, wrong.__name__


def test_a_hidden_test_draws_other_sizes_and_the_global_state_is_left_alone(capsys):
    seen = []

    def fitted(model, batch, mask_id, generator, probability, nsp):  # the visible vocabulary
        seen.append(model.bert.config.vocab_size)
        inputs, labels = pretraining.mask_tokens(
            batch["input_ids"], batch["special"], mask_id, 40, generator, probability
        )
        chosen = labels != -100
        mlm, nsp_logits = model(inputs, batch["token_type_ids"], batch["attention_mask"], chosen)
        loss = F.cross_entropy(mlm, labels[chosen])
        return loss + F.cross_entropy(nsp_logits, batch["nsp_labels"]) if nsp else loss

    torch.manual_seed(123)
    state = torch.random.get_rng_state()
    assert checks.pretraining_loss(fitted) is False  # the second model's vocabulary is larger
    assert "not the model's 57: pass model.bert.config.vocab_size" in capsys.readouterr().out
    visible = set(seen)
    seen.clear()
    with fresh_inputs(12345):
        assert checks.pretraining_loss(right) is True
        assert checks.pretraining_loss(fitted) is False
    assert visible == {40, 57} and 40 not in seen and len(set(seen)) == 2
    assert torch.equal(torch.random.get_rng_state(), state)


def static_right(embeddings, input_ids, attention_mask, special_ids):
    """An independent right answer: a loop over rows and tokens."""
    rows = []
    for ids, mask in zip(input_ids.tolist(), attention_mask.tolist(), strict=True):
        kept = [t for t, m in zip(ids, mask, strict=True) if m and t not in special_ids]
        vectors = embeddings.weight[kept] if kept else embeddings.weight[:0]
        rows.append(vectors.mean(0) if kept else torch.zeros(embeddings.weight.shape[1]))
    return torch.stack(rows).detach()


def static_with_specials(embeddings, input_ids, attention_mask, special_ids):
    keep = attention_mask.unsqueeze(-1).float()
    return ((embeddings(input_ids) * keep).sum(1) / keep.sum(1)).detach()


def static_with_padding(embeddings, input_ids, attention_mask, special_ids):
    keep = (~torch.isin(input_ids, torch.tensor(special_ids))).unsqueeze(-1).float()
    return ((embeddings(input_ids) * keep).sum(1) / keep.sum(1)).detach()


def static_sum(embeddings, input_ids, attention_mask, special_ids):
    keep = attention_mask.bool() & ~torch.isin(input_ids, torch.tensor(special_ids))
    return (embeddings(input_ids) * keep.unsqueeze(-1).float()).sum(1).detach()


def test_the_static_vectors_checker_accepts_a_right_answer_and_names_typical_mistakes(capsys):
    assert checks.static_vectors(static_right)
    for wrong, words in [
        (static_with_specials, "[CLS] and [SEP]"),
        (static_with_padding, "padding"),
        (static_sum, "a sum, not a mean"),
    ]:
        capsys.readouterr()
        assert not checks.static_vectors(wrong), wrong.__name__
        assert words in capsys.readouterr().out, wrong.__name__


def test_the_static_vectors_checker_draws_other_sizes_in_the_hidden_test():
    state = torch.random.get_rng_state()
    with fresh_inputs(5):
        assert checks.static_vectors(static_right)
        assert not checks.static_vectors(static_sum)
    assert torch.equal(torch.random.get_rng_state(), state)


def test_short_run_claims_hold_on_a_plateau_and_fail_on_a_run_still_falling():
    plateau = [(9.0, 0.7)] * 10 + [(7.32, 0.68)] * 115
    claims = checks.ch08.short_run_claims(plateau, 0.06, 0.05, 7.16)
    assert all(claims.values()), claims
    falling = [(9.0 - 0.01 * step, 0.7) for step in range(125)]  # never flat, never 7.32
    claims = checks.ch08.short_run_claims(falling, 0.06, 0.05, 7.16)
    assert not claims["flat over the last 50 steps"]
    assert not claims["the level the prose quotes"]
    assert not checks.ch08.short_run_claims(plateau, 0.2, 0.05, 7.16)[
        "held-out top-1 about the unigram's"
    ]


def read_right(hidden, attention_mask, dense, how):
    """An independent right answer: row by row, the pooled vector through dense's own weights."""
    if how not in ("cls", "pooled"):
        raise ValueError(f"how must be 'cls' or 'pooled', got {how!r}")
    rows = []
    for row in hidden:
        first = row[0]
        if how == "pooled":
            first = torch.tanh(dense.weight @ first + dense.bias)
        rows.append(first)
    return torch.stack(rows)


def read_no_tanh(hidden, attention_mask, dense, how):
    return hidden[:, 0] if how == "cls" else dense(hidden[:, 0])


def read_last_token(hidden, attention_mask, dense, how):
    last = hidden[torch.arange(len(hidden)), attention_mask.sum(1) - 1]
    return last if how == "cls" else torch.tanh(dense(hidden[:, 0]))


def read_pooled_mean(hidden, attention_mask, dense, how):
    real = attention_mask.unsqueeze(-1).float()
    mean = (hidden * real).sum(1) / real.sum(1)
    return hidden[:, 0] if how == "cls" else torch.tanh(dense(mean))


def read_any_how(hidden, attention_mask, dense, how):
    return hidden[:, 0] if how == "cls" else torch.tanh(dense(hidden[:, 0]))


def read_type_error(hidden, attention_mask, dense, how):
    if how not in ("cls", "pooled"):
        raise TypeError(how)
    return read_any_how(hidden, attention_mask, dense, how)


def test_the_sentence_vector_checker_accepts_a_right_answer_and_names_typical_mistakes(capsys):
    state = torch.random.get_rng_state()
    assert checks.sentence_vector(read_right)
    assert "passes all 5 test cases" in capsys.readouterr().out
    for wrong, words in [
        (read_no_tanh, "the tanh is missing"),
        (read_last_token, "each row's last real token"),
        (read_pooled_mean, "dense and tanh read the mean"),
        (read_any_how, "expected a ValueError naming `how`"),
        (read_type_error, "raised TypeError, expected a ValueError"),
    ]:
        assert not checks.sentence_vector(wrong), wrong.__name__
        assert words in capsys.readouterr().out, wrong.__name__
    with fresh_inputs(7):  # other sizes: a right answer still passes, a wrong one still fails
        assert checks.sentence_vector(read_right)
        assert not checks.sentence_vector(read_no_tanh)
    assert torch.equal(torch.random.get_rng_state(), state)


def baseline(vectors, labels, split, grid, choose_on="validation", scaled=True):
    """Exercise 8.4's baseline written out; ``choose_on`` and ``scaled`` make two mistakes."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    train, test, chosen = split == "train", split == "test", split == choose_on
    x = StandardScaler().fit(vectors[train]).transform(vectors) if scaled else vectors
    best = None
    for c in grid:
        model = LogisticRegression(C=c, max_iter=2000).fit(x[train], labels[train])
        score = model.score(x[chosen], labels[chosen])
        if best is None or score > best[0]:
            best = (score, c, model)
    return best[1], best[2].score(x[test], labels[test])


def test_the_static_baseline_checker_accepts_a_right_answer_and_names_typical_mistakes(capsys):
    assert checks.static_baseline(baseline)
    assert "passes all 2 test cases" in capsys.readouterr().out
    for wrong, words in [
        (lambda *a: baseline(*a, choose_on="test"), "chosen on the test rows"),
        (lambda *a: baseline(*a, choose_on="train"), "chosen on the training rows"),
        (lambda *a: baseline(*a, scaled=False), "not standardised"),
        (lambda *a: (baseline(*a)[0], 0.5), "expected C"),
        (lambda *a: baseline(*a)[0], "expected a pair (C, test_accuracy)"),
    ]:
        assert not checks.static_baseline(wrong)
        assert words in capsys.readouterr().out
    with fresh_inputs(7):
        assert checks.static_baseline(baseline)
        assert not checks.static_baseline(lambda *a: baseline(*a, choose_on="test"))
