"""The chapter 7 checker accepts a right 80/10/10 masking function and catches typical wrong ones."""

import torch

from attention_to_bert import checks


def right(input_ids, special_mask, mask_id, vocab_size, mask_prob=0.15):
    """BERT's rule: choose 15% of the ordinary tokens; of those, 80% [MASK], 10% random, 10% kept."""
    chosen = (torch.rand(input_ids.shape) < mask_prob) & ~special_mask
    labels = input_ids.masked_fill(~chosen, -100)
    action = torch.rand(input_ids.shape)  # one draw decides what happens to a chosen token
    corrupted = input_ids.masked_fill(chosen & (action < 0.8), mask_id)
    to_random = chosen & (action >= 0.8) & (action < 0.9)
    random_ids = torch.randint(vocab_size, input_ids.shape)
    return torch.where(to_random, random_ids, corrupted), labels


def always_mask(input_ids, special_mask, mask_id, vocab_size):
    chosen = (torch.rand(input_ids.shape) < 0.15) & ~special_mask
    return input_ids.masked_fill(chosen, mask_id), input_ids.masked_fill(~chosen, -100)


def labels_only_on_masked(input_ids, special_mask, mask_id, vocab_size):
    corrupted, labels = right(input_ids, special_mask, mask_id, vocab_size)
    return corrupted, labels.masked_fill(corrupted != mask_id, -100)


def masks_specials_too(input_ids, special_mask, mask_id, vocab_size):
    return right(input_ids, torch.zeros_like(special_mask), mask_id, vocab_size)


def labels_are_corrupted_ids(input_ids, special_mask, mask_id, vocab_size):
    corrupted, labels = right(input_ids, special_mask, mask_id, vocab_size)
    return corrupted, torch.where(labels != -100, corrupted, labels)


def labels_everywhere(input_ids, special_mask, mask_id, vocab_size):
    corrupted, _ = right(input_ids, special_mask, mask_id, vocab_size)
    return corrupted, input_ids.clone()


def labels_zero_when_not_chosen(input_ids, special_mask, mask_id, vocab_size):
    corrupted, labels = right(input_ids, special_mask, mask_id, vocab_size)
    return corrupted, labels.masked_fill(labels == -100, 0)


def in_place(input_ids, special_mask, mask_id, vocab_size):
    corrupted, labels = right(input_ids, special_mask, mask_id, vocab_size)
    input_ids.copy_(corrupted)
    return corrupted, labels


def wrong_rate(input_ids, special_mask, mask_id, vocab_size):
    return right(input_ids, special_mask, mask_id, vocab_size, mask_prob=0.3)


def random_half(input_ids, special_mask, mask_id, vocab_size):  # 50% [MASK], 50% random
    chosen = (torch.rand(input_ids.shape) < 0.15) & ~special_mask
    coin = torch.rand(input_ids.shape) < 0.5
    corrupted = torch.where(chosen & coin, mask_id, input_ids)
    corrupted = torch.where(chosen & ~coin, torch.randint(vocab_size, input_ids.shape), corrupted)
    return corrupted, input_ids.masked_fill(~chosen, -100)


def same_every_call(input_ids, special_mask, mask_id, vocab_size):
    torch.manual_seed(1)
    return right(input_ids, special_mask, mask_id, vocab_size)


def crashes(input_ids, special_mask, mask_id, vocab_size):
    raise RuntimeError("not written yet")


def test_accepts_the_right_answer(capsys):
    assert checks.mlm_mask(right)
    assert "passes" in capsys.readouterr().out


def test_catches_typical_wrong_answers(capsys):
    expectations = {
        always_mask: "1.000 of the chosen tokens became [MASK], expected 0.8",
        labels_only_on_masked: "label every chosen token",
        masks_specials_too: "special positions",
        labels_are_corrupted_ids: "ORIGINAL token",
        in_place: "modified in place",
        labels_everywhere: "labels must be -100 where a token was not chosen",
        labels_zero_when_not_chosen: "labels must be -100 where a token was not chosen",
        wrong_rate: "expected 0.15",
        random_half: "expected 0.8",
        same_every_call: "fresh random numbers",
        crashes: "raised RuntimeError",
    }
    for wrong, message in expectations.items():
        assert not checks.mlm_mask(wrong), wrong.__name__
        output = capsys.readouterr().out
        assert message in output, (wrong.__name__, output)


# Exercise 7.5: the task heads, written here independently of the chapter's solution
class Classifier(torch.nn.Module):
    def __init__(self, encoder, num_labels):
        super().__init__()
        self.encoder, self.linear = encoder, torch.nn.Linear(encoder.config.hidden_size, num_labels)

    def forward(self, input_ids, token_type_ids=None, attention_mask=None):
        return self.linear(self.encoder(input_ids, token_type_ids, attention_mask)[0][:, 0])


class Tagger(torch.nn.Module):
    def __init__(self, encoder, num_tags):
        super().__init__()
        self.encoder, self.linear = encoder, torch.nn.Linear(encoder.config.hidden_size, num_tags)

    def forward(self, input_ids, token_type_ids=None, attention_mask=None):
        return self.linear(self.encoder(input_ids, token_type_ids, attention_mask)[0])


class Span(torch.nn.Module):
    def __init__(self, encoder):
        super().__init__()
        self.encoder, self.linear = encoder, torch.nn.Linear(encoder.config.hidden_size, 2)

    def allowed(self, token_type_ids, attention_mask):
        """The passage: segment B, real tokens, without the last real token (the final [SEP])."""
        positions = torch.arange(attention_mask.shape[1])
        last = positions == attention_mask.sum(1, keepdim=True) - 1
        return (token_type_ids == 1) & (attention_mask == 1) & ~last

    def forward(self, input_ids, token_type_ids, attention_mask):
        scores = self.linear(self.encoder(input_ids, token_type_ids, attention_mask)[0])
        outside = ~self.allowed(token_type_ids, attention_mask)
        return tuple(scores[..., k].masked_fill(outside, -1e4) for k in range(2))


class PooledClassifier(Classifier):  # reads the pooler, tanh(W h + b): not a linear layer of h
    def forward(self, input_ids, token_type_ids=None, attention_mask=None):
        return self.linear(self.encoder(input_ids, token_type_ids, attention_mask).pooler_output)


class MeanClassifier(Classifier):  # reads the mean of all vectors, not [CLS]
    def forward(self, input_ids, token_type_ids=None, attention_mask=None):
        return self.linear(self.encoder(input_ids, token_type_ids, attention_mask)[0].mean(1))


class PositionTagger(Tagger):  # adds a score that depends on the position
    def forward(self, input_ids, token_type_ids=None, attention_mask=None):
        scores = super().forward(input_ids, token_type_ids, attention_mask)
        return scores + torch.arange(scores.shape[1])[:, None]


class SpanKeepsSep(Span):  # segment B and real tokens, but the final [SEP] stays allowed
    def allowed(self, token_type_ids, attention_mask):
        return (token_type_ids == 1) & (attention_mask == 1)


class SpanMinusInf(Span):  # -inf instead of the asked -1e4
    def forward(self, input_ids, token_type_ids, attention_mask):
        start, end = super().forward(input_ids, token_type_ids, attention_mask)
        return start.masked_fill(start == -1e4, -torch.inf), end.masked_fill(
            end == -1e4, -torch.inf
        )


def test_task_heads_accepts_right_heads(capsys):
    assert checks.task_heads((Classifier, Tagger, Span))
    assert "passes all" in capsys.readouterr().out


def test_task_heads_accepts_right_heads_on_hidden_sizes():
    from attention_to_bert.checks.checker import set_hidden_seed

    for seed in (1, 2):
        previous = set_hidden_seed(seed)
        try:
            assert checks.task_heads((Classifier, Tagger, Span))
        finally:
            set_hidden_seed(previous)


def test_task_heads_catches_typical_mistakes(capsys):
    wrong = {
        (PooledClassifier, Tagger, Span): "not a linear layer of the [CLS] vector",
        (MeanClassifier, Tagger, Span): "other than [CLS]",
        (Classifier, PositionTagger, Span): "apply one linear layer to every vector",
        (Classifier, Tagger, SpanKeepsSep): "exactly -1e4 outside the passage",
        (Classifier, Tagger, SpanMinusInf): "exactly -1e4 outside the passage",
        (Classifier, Tagger): "three classes",
    }
    for heads, message in wrong.items():
        assert not checks.task_heads(heads)
        assert message in capsys.readouterr().out, heads


def test_task_heads_reports_a_stub_without_crashing(capsys):
    class Stub(torch.nn.Module):  # the student edition's body: `...`
        pass

    assert not checks.task_heads((Stub, Stub, Stub))
    assert "problem" in capsys.readouterr().out


def right_pooling(hidden, attention_mask, how):
    if how == "cls":
        return hidden[:, 0]
    if how == "mean":
        m = attention_mask.to(hidden.dtype).unsqueeze(-1)
        return (hidden * m).sum(1) / m.sum(1)
    raise ValueError(f"how must be 'cls' or 'mean', got {how!r}")


UNKNOWN_HOW = ValueError("how: no such pooling")


def pooling_with(cls=None, mean=None, error=UNKNOWN_HOW):
    def pool(hidden, attention_mask, how):
        if how == "cls":
            return cls(hidden, attention_mask) if cls else hidden[:, 0]
        if how == "mean":
            return (
                mean(hidden, attention_mask) if mean else right_pooling(hidden, attention_mask, how)
            )
        if error is not None:
            raise error
        return hidden[:, 0]

    return pool


def test_pooling_accepts_the_right_answer(capsys):
    assert checks.pooling(right_pooling)
    assert "passes all" in capsys.readouterr().out


def test_pooling_catches_typical_mistakes(capsys):
    wrong = {
        "last position": pooling_with(cls=lambda h, m: h[:, -1]),
        "padding averaged in": pooling_with(mean=lambda h, m: h.mean(1)),
        "divided by the padded length": pooling_with(
            mean=lambda h, m: (h * m.unsqueeze(-1)).sum(1) / h.shape[1]
        ),
        "no error for an unknown how": pooling_with(error=None),
        "an error that does not name how": pooling_with(error=ValueError("no")),
        "a TypeError": pooling_with(error=TypeError("how")),
        "a stub": lambda hidden, attention_mask, how: None,
    }
    for name, candidate in wrong.items():
        assert not checks.pooling(candidate), name
    out = capsys.readouterr().out
    assert "padding was averaged in" in out and "[CLS] is the first" in out
    assert "number of real tokens" in out and "naming `how`" in out


def by_hand_embeddings(input_ids, token_type_ids, weights, eps, norm=True):
    """Exercise 7.7's embeddings: three look-ups, summed, then LayerNorm."""
    e = "embeddings."
    summed = (
        weights[e + "word_embeddings.weight"][input_ids]
        + weights[e + "position_embeddings.weight"][: input_ids.shape[1]]
        + weights[e + "token_type_embeddings.weight"][token_type_ids]
    )
    if not norm:
        return summed
    layer_norm = weights[e + "LayerNorm.weight"], weights[e + "LayerNorm.bias"]
    return torch.nn.functional.layer_norm(summed, summed.shape[-1:], *layer_norm, eps)


def by_hand_layer(hidden, attention_mask, weights, index, heads, eps, scale=True, gelu="none"):
    """Exercise 7.7's post-LN layer, from the state_dict; ``scale``/``gelu`` make typical slips."""
    F = torch.nn.functional

    def w(name):
        prefix = f"encoder.layer.{index}.{name}."
        return weights[prefix + "weight"], weights[prefix + "bias"]

    def split(x):
        return x.unflatten(-1, (heads, -1)).transpose(1, 2)

    q, k, v = (
        split(F.linear(hidden, *w(f"attention.self.{n}"))) for n in ("query", "key", "value")
    )
    scores = q @ k.transpose(-1, -2) / (q.shape[-1] ** 0.5 if scale else 1)
    padding = (attention_mask == 0)[:, None, None, :]
    context = (scores.masked_fill(padding, -torch.inf).softmax(-1) @ v).transpose(1, 2).flatten(2)
    x = F.layer_norm(
        F.linear(context, *w("attention.output.dense")) + hidden,
        x_shape := hidden.shape[-1:],
        *w("attention.output.LayerNorm"),
        eps,
    )
    wide = F.gelu(F.linear(x, *w("intermediate.dense")), approximate=gelu)
    return F.layer_norm(
        F.linear(wide, *w("output.dense")) + x, x_shape, *w("output.LayerNorm"), eps
    )


def test_bert_by_hand_accepts_the_right_answer(capsys):
    assert checks.bert_by_hand((by_hand_embeddings, by_hand_layer))
    assert "passes all" in capsys.readouterr().out


def test_bert_by_hand_catches_typical_mistakes(capsys):
    def no_norm(*args):
        return by_hand_embeddings(*args, norm=False)

    def unscaled(*args):
        return by_hand_layer(*args, scale=False)

    def tanh_gelu(*args):
        return by_hand_layer(*args, gelu="tanh")

    wrong = {
        (no_norm, by_hand_layer): "no LayerNorm",
        (by_hand_embeddings, unscaled): "outputs differ from transformers'",
        (by_hand_embeddings, tanh_gelu): "outputs differ from transformers'",
        (by_hand_embeddings,): "a pair of functions",
    }
    for functions, message in wrong.items():
        assert not checks.bert_by_hand(functions)
        assert message in capsys.readouterr().out, functions


def test_bert_by_hand_reports_a_stub_without_crashing(capsys):
    def stub(*args):  # the student edition's body: `...`
        return None

    assert not checks.bert_by_hand((stub, stub))
    assert "returned None" in capsys.readouterr().out
