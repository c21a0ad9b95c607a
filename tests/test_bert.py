"""Tests of bert.py: our BERT against transformers.BertModel on MiniLM's real weights, the heads,
the 80/10/10 masking rule, and clear errors on bad input."""

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")

import pytest
import torch

from attention_to_bert import bert, data

SENTENCES = ["The bank of the river was muddy.", "Hi"]
PAIRS = ["I went to the bank to get some money.", "there"]


@pytest.fixture(scope="module")
def minilm():
    return bert.load_minilm()


@pytest.fixture(scope="module")
def reference():
    transformers = pytest.importorskip("transformers")
    return transformers.BertModel.from_pretrained(
        str(bert.minilm_path()), attn_implementation="eager"
    ).eval()


@pytest.fixture(scope="module")
def encoded(minilm):
    _, tokenizer = minilm
    return tokenizer(SENTENCES, PAIRS, padding=True, return_tensors="pt")


def tiny_config(**changes):
    values = dict(
        vocab_size=50,
        hidden_size=16,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=32,
        max_position_embeddings=20,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
    )
    values.update(changes)
    return bert.BertConfig(**values)


def test_minilm_loads_strictly_into_our_model(minilm):
    model, tokenizer = minilm
    assert model.config.num_hidden_layers == 6 and model.config.num_attention_heads == 12
    assert (
        model.config.hidden_size == 384 and model.config.vocab_size == tokenizer.vocab_size == 30522
    )
    assert not model.training
    assert tokenizer.convert_ids_to_tokens(tokenizer("bank")["input_ids"]) == [
        "[CLS]",
        "bank",
        "[SEP]",
    ]


def test_hidden_states_and_attention_equal_transformers(minilm, reference, encoded):
    model, _ = minilm
    with torch.no_grad():
        hidden, attentions = model(
            encoded["input_ids"], encoded["token_type_ids"], encoded["attention_mask"]
        )
        expected = reference(**encoded, output_attentions=True)
    real = encoded["attention_mask"].bool()
    assert hidden.shape == expected.last_hidden_state.shape == (2, real.shape[1], 384)
    assert (hidden - expected.last_hidden_state)[real].abs().max() < 1e-4
    assert len(attentions) == len(expected.attentions) == 6
    for ours, theirs in zip(attentions, expected.attentions, strict=True):
        assert ours.shape == theirs.shape == (2, 12, real.shape[1], real.shape[1])
        assert (ours - theirs).abs().max() < 1e-5
    # padding gets no attention, and each row is a distribution
    assert attentions[0][1][..., ~real[1]].abs().max() == 0
    assert torch.allclose(attentions[-1].sum(-1), torch.ones(2, 12, real.shape[1]), atol=1e-5)


def test_pooler_equals_transformers(minilm, reference, encoded):
    model, _ = minilm
    with torch.no_grad():
        hidden, _ = model(
            encoded["input_ids"], encoded["token_type_ids"], encoded["attention_mask"]
        )
        expected = reference(**encoded).pooler_output
    assert (model.pooler(hidden) - expected).abs().max() < 1e-5


def test_sdpa_path_gives_the_same_hidden_states(minilm, encoded):
    model, _ = minilm
    fused = bert.BertModel(
        bert.BertConfig(**{**model.config.to_dict(), "attn_implementation": "sdpa"})
    )
    fused.load_state_dict(model.state_dict())
    fused.eval()
    args = (encoded["input_ids"], encoded["token_type_ids"], encoded["attention_mask"])
    with torch.no_grad():
        eager, _ = model(*args)
        fast, weights = fused(*args, output_attentions=False)
        fallback, fallback_weights = fused(*args)  # weights requested: the explicit path is used
    assert weights == [] and len(fallback_weights) == 6
    real = encoded["attention_mask"].bool()
    assert (fast - eager)[real].abs().max() < 1e-4
    assert torch.equal(fallback, eager)


def test_config_from_json_and_from_dict(tmp_path):
    config = bert.BertConfig.from_json(bert.minilm_path())
    assert (config.hidden_size, config.intermediate_size, config.layer_norm_eps) == (
        384,
        1536,
        1e-12,
    )
    assert (
        bert.BertConfig.from_dict(
            {"hidden_size": 8, "num_attention_heads": 2, "unknown": 1}
        ).hidden_size
        == 8
    )
    with pytest.raises(ValueError, match="multiple of num_attention_heads"):
        bert.BertConfig(hidden_size=10, num_attention_heads=4)
    with pytest.raises(ValueError, match="hidden_act"):
        bert.BertConfig(hidden_act="swish")
    with pytest.raises(ValueError, match="attn_implementation"):
        bert.BertConfig(attn_implementation="flash")


def test_state_dict_names_follow_hugging_face():
    names = set(bert.BertModel(tiny_config()).state_dict())
    for name in (
        "embeddings.word_embeddings.weight",
        "embeddings.token_type_embeddings.weight",
        "embeddings.LayerNorm.weight",
        "encoder.layer.1.attention.self.query.weight",
        "encoder.layer.0.attention.output.LayerNorm.bias",
        "encoder.layer.0.intermediate.dense.weight",
        "encoder.layer.0.output.dense.weight",
        "pooler.dense.weight",
    ):
        assert name in names


def test_fully_masked_sequence_gives_zero_weights_not_nan():
    torch.manual_seed(0)
    model = bert.BertModel(tiny_config()).eval()
    ids = torch.randint(1, 50, (2, 5))
    mask = torch.tensor([[1, 1, 1, 0, 0], [0, 0, 0, 0, 0]])
    hidden, attentions = model(ids, attention_mask=mask)
    assert not torch.isnan(hidden).any()
    assert all(weights[1].abs().max() == 0 for weights in attentions)
    assert torch.allclose(attentions[0][0].sum(-1), torch.ones(4, 5))
    assert attentions[0][0][..., 3:].abs().max() == 0


def test_padding_does_not_change_real_tokens():
    torch.manual_seed(0)
    model = bert.BertModel(tiny_config()).eval()
    ids = torch.randint(1, 50, (1, 6))
    short, _ = model(ids)
    padded, _ = model(
        torch.cat([ids, torch.zeros(1, 3, dtype=torch.long)], 1),
        attention_mask=torch.tensor([[1] * 6 + [0] * 3]),
    )
    assert torch.allclose(short, padded[:, :6], atol=1e-5)


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        (dict(input_ids=torch.zeros(2, 5)), TypeError, "torch.long"),
        (dict(input_ids=torch.zeros(5, dtype=torch.long)), ValueError, r"\(batch, seq\)"),
        (dict(input_ids=torch.full((1, 5), 50)), ValueError, r"input_ids must lie in \[0, 50\)"),
        (
            dict(input_ids=torch.zeros(1, 21, dtype=torch.long)),
            ValueError,
            "max_position_embeddings",
        ),
        (
            dict(
                input_ids=torch.zeros(2, 5, dtype=torch.long),
                token_type_ids=torch.zeros(2, 4, dtype=torch.long),
            ),
            ValueError,
            r"token_type_ids must have shape \(2, 5\)",
        ),
        (
            dict(
                input_ids=torch.zeros(2, 5, dtype=torch.long), token_type_ids=torch.full((2, 5), 2)
            ),
            ValueError,
            "token_type_ids must lie",
        ),
        (
            dict(input_ids=torch.zeros(2, 5, dtype=torch.long), attention_mask=torch.ones(2, 4)),
            ValueError,
            r"attention_mask must have shape \(2, 5\)",
        ),
    ],
)
def test_bad_inputs_raise_clear_errors(kwargs, error, message):
    model = bert.BertModel(tiny_config())
    with pytest.raises(error, match=message):
        model(**kwargs)


def test_model_needs_a_config():
    with pytest.raises(TypeError, match="BertConfig"):
        bert.BertModel({"hidden_size": 16})


def test_pretraining_heads_shapes_tying_and_loss():
    torch.manual_seed(0)
    config = tiny_config()
    model = bert.BertForPreTraining(config)
    assert model.cls.predictions.decoder.weight is model.bert.embeddings.word_embeddings.weight
    ids = torch.randint(5, 50, (3, 7))
    mlm, nsp = model(ids)
    assert mlm.shape == (3, 7, 50) and nsp.shape == (3, 2)
    labels = torch.full((3, 7), -100)
    labels[:, 2] = ids[:, 2]
    only, _ = model(ids, predict_at=labels != -100)
    assert only.shape == (3, 50) and torch.allclose(only, mlm[:, 2], atol=1e-6)
    full_loss = bert.pretraining_loss(mlm, nsp, labels, torch.tensor([0, 1, 0]))
    short_loss = bert.pretraining_loss(only, nsp, labels[labels != -100], torch.tensor([0, 1, 0]))
    assert torch.allclose(full_loss[0], short_loss[0]) and torch.allclose(
        full_loss[1], short_loss[1]
    )
    with pytest.raises(ValueError, match="predict_at"):
        model(ids, predict_at=labels)


def test_a_tiny_bert_learns_to_fill_a_mask():
    torch.manual_seed(0)
    model = bert.BertForPreTraining(
        tiny_config(vocab_size=12, hidden_size=32, intermediate_size=64, initializer_range=0.1)
    )
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    # sequences 5 6 7 8 9 shifted: the masked token is always the left neighbour + 1
    base = torch.arange(5) + torch.randint(0, 3, (256, 1)) + 5
    for _ in range(150):
        special = torch.zeros_like(base, dtype=torch.bool)
        corrupted, labels = bert.mask_tokens(base, special, mask_id=4, vocab_size=12, mask_prob=0.3)
        selected = labels != -100
        mlm, nsp = model(corrupted, predict_at=selected)
        loss = bert.pretraining_loss(
            mlm, nsp, labels[selected], torch.zeros(256, dtype=torch.long)
        )[0]
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    model.eval()
    test = base[:64].clone()
    test[:, 2] = 4
    mlm, _ = model(test)
    assert (mlm[:, 2].argmax(-1) == base[:64, 2]).float().mean() > 0.9


def test_classifier_copies_the_encoder_and_gives_logits():
    torch.manual_seed(0)
    encoder = bert.BertModel(tiny_config())
    classifier = bert.BertForSequenceClassification.from_encoder(encoder, num_labels=3)
    assert classifier.bert is not encoder
    assert torch.equal(
        classifier.bert.embeddings.word_embeddings.weight, encoder.embeddings.word_embeddings.weight
    )
    assert classifier(torch.randint(0, 50, (4, 6))).shape == (4, 3)
    with pytest.raises(ValueError, match="num_labels"):
        bert.BertForSequenceClassification(tiny_config(), num_labels=1)


def test_mask_tokens_follows_the_80_10_10_rule():
    generator = torch.Generator().manual_seed(0)
    vocab_size, mask_id = 1000, 4
    ids = torch.randint(5, vocab_size, (400, 250), generator=generator)
    special = torch.zeros_like(ids, dtype=torch.bool)
    special[:, 0] = special[:, -1] = True
    corrupted, labels = bert.mask_tokens(
        ids, special, mask_id=mask_id, vocab_size=vocab_size, generator=generator
    )
    chosen = labels != -100
    assert not chosen[special].any()
    assert torch.equal(labels[chosen], ids[chosen])
    assert torch.equal(corrupted[~chosen], ids[~chosen])  # untouched where not chosen
    rate = chosen.float().sum() / (~special).sum()
    assert abs(rate - 0.15) < 0.005
    n = chosen.sum()
    masked = (corrupted[chosen] == mask_id).float().sum() / n
    kept = (corrupted[chosen] == ids[chosen]).float().sum() / n
    random = 1 - masked - kept
    # ~15,000 chosen tokens: a standard error of about 0.003 on each proportion
    assert abs(masked - 0.8) < 0.015 and abs(kept - 0.1) < 0.012 and abs(random - 0.1) < 0.012
    assert (
        corrupted[chosen & (corrupted != mask_id) & (corrupted != ids)].unique().numel() > 500
    )  # spread out


def test_mask_tokens_is_reproducible_and_leaves_input_alone():
    ids = torch.randint(5, 30, (8, 10))
    copy = ids.clone()
    special = torch.zeros_like(ids, dtype=torch.bool)
    first = bert.mask_tokens(
        ids, special, mask_id=4, vocab_size=30, generator=torch.Generator().manual_seed(3)
    )
    second = bert.mask_tokens(
        ids, special, mask_id=4, vocab_size=30, generator=torch.Generator().manual_seed(3)
    )
    assert torch.equal(first[0], second[0]) and torch.equal(first[1], second[1])
    assert torch.equal(ids, copy)


@pytest.mark.parametrize(
    "args, kwargs, error, message",
    [
        ((torch.zeros(2, 3),), {}, TypeError, "input_ids must be a torch.long"),
        (
            (torch.zeros(2, 3, dtype=torch.long),),
            dict(special=torch.zeros(2, 3)),
            TypeError,
            "special_mask must be a bool tensor",
        ),
        (
            (torch.zeros(2, 3, dtype=torch.long),),
            dict(special=torch.zeros(2, 4, dtype=torch.bool)),
            ValueError,
            r"special_mask must have shape \(2, 3\)",
        ),
        ((torch.zeros(2, 3, dtype=torch.long),), dict(mask_prob=1.5), ValueError, "mask_prob"),
        ((torch.zeros(2, 3, dtype=torch.long),), dict(mask_id=30), ValueError, "mask_id"),
    ],
)
def test_mask_tokens_rejects_bad_input(args, kwargs, error, message):
    special = kwargs.pop("special", torch.zeros(2, 3, dtype=torch.bool))
    options = dict(mask_id=4, vocab_size=30)
    options.update(kwargs)
    with pytest.raises(error, match=message):
        bert.mask_tokens(*args, special, **options)


def test_mean_pool_ignores_padding_and_checks_shapes():
    hidden = torch.tensor([[[1.0, 2.0], [3.0, 4.0], [100.0, 100.0]]])
    assert torch.equal(
        bert.mean_pool(hidden, torch.tensor([[1, 1, 0]])), torch.tensor([[2.0, 3.0]])
    )
    with pytest.raises(ValueError, match="attention_mask"):
        bert.mean_pool(hidden, torch.ones(1, 2))


def test_special_token_mask():
    ids = torch.tensor([[2, 7, 3, 0]])
    assert bert.special_token_mask(ids, [0, 2, 3]).tolist() == [[True, False, True, True]]


# --- the chapter 7 corpus in data.py ---


def test_stories_are_seeded_chained_and_agree_in_number():
    stories = data.make_stories(50, seed=3)
    assert stories == data.make_stories(50, seed=3) and stories != data.make_stories(50, seed=4)
    vocabulary = data.pretraining_vocabulary()
    for story in stories:
        assert 3 <= len(story) <= 6
        for sentence in story:
            assert sentence[-1] == "." and all(word in vocabulary for word in sentence)
    assert vocabulary.itos[:5] == list(data.BERT_SPECIALS)
    verbs = {
        verb
        for world in data.pretraining._STORY_WORLDS.values()
        for verb in (*world["verbs"], *world["intransitive"])
    }
    adjectives = {
        adjective
        for world in data.pretraining._STORY_WORLDS.values()
        for adjective in world["adjectives"]
    }
    for sentence in (sentence for story in stories for sentence in story):
        verb = sentence[3] if sentence[1] in adjectives else sentence[2]
        if sentence[0] in ("this", "that", "one"):  # singular subject: "this cow sleeps"
            assert verb in {data.pretraining._with_s(v) for v in verbs}, sentence
        elif sentence[0] in ("these", "those", "some"):  # plural subject: "these cows sleep"
            assert verb in verbs, sentence
    for story in stories:  # chained: the last noun of a transitive sentence is the next subject
        for first, second in zip(story, story[1:], strict=False):
            subject = second[2] if second[1] in adjectives else second[1]
            assert subject in first, (first, second)


def test_sentence_pairs_are_half_random_and_encoded_like_bert():
    stories = data.make_stories(400, seed=0)
    pairs = data.make_sentence_pairs(stories, seed=0)
    assert len(pairs) == sum(len(story) - 1 for story in stories)
    share_random = sum(pair.is_random_next for pair in pairs) / len(pairs)
    assert abs(share_random - 0.5) < 0.05
    follows = {
        tuple(a) + ("|",) + tuple(b)
        for story in stories
        for a, b in zip(story, story[1:], strict=False)
    }
    assert all(
        (tuple(p.first) + ("|",) + tuple(p.second)) in follows
        for p in pairs
        if not p.is_random_next
    )
    vocabulary = data.pretraining_vocabulary()
    batch = data.encode_sentence_pairs(pairs[:4], vocabulary)
    first = pairs[0]
    n_a, n_b = len(first.first), len(first.second)
    assert batch.input_ids[0, 0] == vocabulary.id(data.BERT_CLS)
    assert (
        batch.input_ids[0, n_a + 1]
        == vocabulary.id(data.BERT_SEP)
        == batch.input_ids[0, n_a + n_b + 2]
    )
    assert batch.token_type_ids[0, : n_a + 2].eq(0).all()
    assert batch.token_type_ids[0, n_a + 2 : n_a + n_b + 3].eq(1).all()
    assert batch.attention_mask[0].sum() == n_a + n_b + 3
    assert batch.labels.tolist() == [p.is_random_next for p in pairs[:4]]
    with pytest.raises(ValueError, match="at least two documents"):
        data.make_sentence_pairs(stories[:1])


def test_encode_for_bert_checks_its_input():
    vocabulary = data.pretraining_vocabulary()
    with pytest.raises(ValueError, match="at least one"):
        data.encode_for_bert([], vocabulary)
    with pytest.raises(ValueError, match="2 first texts but 1 second"):
        data.encode_for_bert([["the"], ["the"]], vocabulary, [["the"]])
    with pytest.raises(ValueError, match="special tokens"):
        data.encode_for_bert([["the"]], data.Vocabulary(["the"]))


def test_documents_for_bert_and_the_pretraining_corpus_share_a_vocabulary():
    train, _ = data.document_splits()
    vocabulary = data.pretraining_vocabulary()
    batch = data.encode_documents_for_bert(train[:5], vocabulary)
    assert batch.labels.tolist() == [document.label for document in train[:5]]
    assert (batch.input_ids != vocabulary.id(data.BERT_UNK)).all()
    corpus = data.pretraining_corpus(num_stories=10, num_reviews=5, seed=0)
    assert len(corpus) == 15 and all(
        sentence[-1] == "." for document in corpus for sentence in document
    )
