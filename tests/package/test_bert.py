"""Tests of bert.py: our BERT against transformers.BertModel on MiniLM's real weights, and
clear errors on bad input."""

import dataclasses
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")

import pytest
import torch

from attention_to_bert import bert

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
        output = model(encoded["input_ids"], encoded["token_type_ids"], encoded["attention_mask"])
        expected = reference(**encoded).pooler_output
    assert (output.pooler_output - expected).abs().max() < 1e-5  # forward calls the pooler
    hidden, attentions = output  # unpacks as the tuple it used to be
    assert hidden is output.last_hidden_state is output["last_hidden_state"] is output[0]
    assert attentions is output.attentions and len(output) == 2


def test_sdpa_path_gives_the_same_hidden_states(minilm, encoded):
    model, _ = minilm
    fused = bert.BertModel(dataclasses.replace(model.config, attn_implementation="sdpa"))
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


def test_config_from_minilm_and_its_checks(minilm):
    config = minilm[0].config
    assert (config.hidden_size, config.intermediate_size, config.layer_norm_eps) == (
        384,
        1536,
        1e-12,
    )
    with pytest.raises(
        ValueError, match="hidden_size=10 must be divisible by num_attention_heads=4"
    ):
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
    fused = bert.BertModel(dataclasses.replace(model.config, attn_implementation="sdpa"))
    fused.load_state_dict(model.state_dict())
    fast, _ = fused.eval()(ids, attention_mask=mask, output_attentions=False)
    assert torch.allclose(fast, hidden, atol=1e-5)
    fast.sum().backward()  # and no NaN gradient from the fully masked sequence
    assert not any(p.grad.isnan().any() for p in fused.parameters() if p.grad is not None)


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
            r"token_type_ids must have shape \(batch, seq\) = \(2, 5\)",
        ),
        (
            dict(
                input_ids=torch.zeros(2, 5, dtype=torch.long), token_type_ids=torch.full((2, 5), 2)
            ),
            ValueError,
            "token_type_ids must lie",
        ),
        (
            dict(
                input_ids=torch.zeros(2, 5, dtype=torch.long),
                token_type_ids=torch.zeros(2, 5, dtype=torch.int32),
            ),
            TypeError,
            "token_type_ids must be a torch.long tensor",
        ),
        (
            dict(input_ids=torch.zeros(2, 5, dtype=torch.long), attention_mask=torch.ones(2, 4)),
            ValueError,
            r"attention_mask must have shape \(batch, seq\) = \(2, 5\)",
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


def test_padding_given_as_a_bool_mask_is_refused_not_inverted():
    """A bool mask with True = padding (chapters 1-6) read as Hugging Face's 1 = real token would
    attend to the padding only: it is refused, and the message names both conventions."""
    model = bert.BertModel(tiny_config()).eval()
    ids, hf_mask = torch.randint(1, 50, (2, 5)), torch.tensor([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]])
    with pytest.raises(TypeError, match="attention_mask must hold 0 and 1, got a bool") as error:
        model(ids, attention_mask=hf_mask == 0)
    assert "1 for real tokens" in str(error.value) and "True for padding" in str(error.value)
    with pytest.raises(ValueError, match="attention_mask must hold only 0 and 1"):
        model(ids, attention_mask=ids)  # token ids passed as the mask
    with torch.no_grad():  # the right conversion gives what the 1/0 mask gives
        expected = model(ids, attention_mask=hf_mask).last_hidden_state
        converted = model(ids, attention_mask=(~(hf_mask == 0)).long()).last_hidden_state
    assert torch.equal(expected, converted)


def test_a_nan_at_a_padded_position_does_not_reach_the_real_tokens():
    torch.manual_seed(0)
    for implementation in ("eager", "sdpa"):
        config = dataclasses.replace(tiny_config(), attn_implementation=implementation)
        model = bert.BertModel(config).eval()
        ids, mask = torch.randint(1, 50, (1, 5)), torch.tensor([[1, 1, 1, 0, 0]])
        with torch.no_grad():
            model.embeddings.word_embeddings.weight[ids[0, 4]] = float("nan")
            hidden = model(ids, attention_mask=mask, output_attentions=False).last_hidden_state
        assert torch.isfinite(hidden[0, :3]).all(), implementation


def test_the_layers_run_without_argument_checks(monkeypatch):
    """Issue 52: BertModel.forward checks once a call, its layers not at all: as many tensor checks
    with four layers as with one."""
    from attention_to_bert import validate

    calls = []
    checked = validate.check_tensor
    monkeypatch.setattr(
        validate, "check_tensor", lambda *a, **k: calls.append(1) or checked(*a, **k)
    )
    ids = torch.tensor([[2, 5, 7, 0]])
    counts = []
    for layers in (1, 4):
        model = bert.BertModel(tiny_config(num_hidden_layers=layers))
        calls.clear()
        model(ids, attention_mask=(ids != 0).long())
        counts.append(len(calls))
    assert counts[0] == counts[1] > 0
