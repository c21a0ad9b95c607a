"""The hierarchical attention network: shapes, masks (padding gets zero weight and changes nothing), errors."""

import pytest
import torch

from attention_to_bert.attention import AdditiveScore, attention, dot_score
from attention_to_bert.han import (
    BiGRUEncoder,
    ContextAttention,
    HierarchicalAttentionNetwork,
    MeanPooling,
)

VOCAB = 30


def _word_ids() -> torch.Tensor:
    """Two documents: the first has 3 sentences of 4, 2 and 3 words; the second 1 sentence of 5 words."""
    ids = torch.zeros(2, 3, 5, dtype=torch.long)
    ids[0, 0, :4] = torch.tensor([5, 6, 7, 8])
    ids[0, 1, :2] = torch.tensor([9, 10])
    ids[0, 2, :3] = torch.tensor([11, 12, 13])
    ids[1, 0, :5] = torch.tensor([14, 15, 16, 17, 18])
    return ids


@pytest.mark.parametrize("score", ["dot", "additive"])
def test_shapes_and_weights_sum_to_one_with_zero_on_padding(score):
    torch.manual_seed(0)
    model = HierarchicalAttentionNetwork(
        VOCAB, num_classes=3, embedding_size=8, hidden_size=6, score=score
    ).eval()
    ids = _word_ids()
    out = model(ids)
    assert out.logits.shape == (2, 3)
    assert out.sentence_weights.shape == (2, 3) and out.word_weights.shape == (2, 3, 5)
    padding = ids == 0
    assert (out.word_weights[padding] == 0).all()  # padded words: exactly zero
    assert (out.sentence_weights[1, 1:] == 0).all()  # padded sentences: exactly zero
    assert torch.allclose(out.sentence_weights.sum(-1), torch.ones(2))
    real_sentences = ~padding.all(-1)
    assert torch.allclose(out.word_weights.sum(-1)[real_sentences], torch.ones(4))
    assert (
        out.word_weights.sum(-1)[~real_sentences] == 0
    ).all()  # a padded sentence: all zeros, no NaN
    assert not torch.isnan(out.logits).any()


@pytest.mark.parametrize("pooling", ["attention", "mean"])
def test_extra_padding_changes_nothing(pooling):
    torch.manual_seed(0)
    model = HierarchicalAttentionNetwork(
        VOCAB, embedding_size=8, hidden_size=6, pooling=pooling
    ).eval()
    ids = _word_ids()
    wider = torch.zeros(
        2, 5, 8, dtype=torch.long
    )  # two more padded sentences, three more padded words
    wider[:, :3, :5] = ids
    with torch.no_grad():
        small, large = model(ids), model(wider)
    assert torch.allclose(small.logits, large.logits, atol=1e-6)
    assert torch.allclose(small.word_weights, large.word_weights[:, :3, :5], atol=1e-6)
    assert torch.allclose(small.sentence_weights, large.sentence_weights[:, :3], atol=1e-6)
    # and a document alone gives what it gives in the batch
    with torch.no_grad():
        alone = model(ids[1:, :1, :])
    assert torch.allclose(alone.logits, small.logits[1:], atol=1e-6)


def test_explicit_mask_is_used_instead_of_pad_id():
    torch.manual_seed(0)
    model = HierarchicalAttentionNetwork(VOCAB, embedding_size=8, hidden_size=6).eval()
    ids = _word_ids()
    mask = ids == 0
    mask[0, 0, 3] = True  # hide one more word
    out = model(ids, mask)
    assert out.word_weights[0, 0, 3] == 0 and out.word_weights[0, 0, 2] > 0


def test_mean_pooling_gives_uniform_weights():
    model = HierarchicalAttentionNetwork(
        VOCAB, embedding_size=8, hidden_size=6, pooling="mean"
    ).eval()
    out = model(_word_ids())
    assert torch.allclose(out.word_weights[0, 0], torch.tensor([0.25, 0.25, 0.25, 0.25, 0.0]))
    assert torch.allclose(out.sentence_weights[0], torch.full((3,), 1 / 3))
    assert torch.allclose(out.sentence_weights[1], torch.tensor([1.0, 0.0, 0.0]))


def test_context_attention_is_attention_with_the_context_vector_as_query():
    torch.manual_seed(0)
    layer = ContextAttention(input_size=6, attention_size=4)
    values = torch.randn(3, 5, 6)
    mask = torch.tensor([[False] * 5, [False, False, True, True, True], [True] * 5])
    pooled, weights = layer(values, mask)
    # by hand: keys u_i = tanh(W h_i + b), score u_i . u, masked softmax, weighted sum of h_i
    keys = torch.tanh(values @ layer.key_projection.weight.T + layer.key_projection.bias)
    scores = keys @ layer.context
    expected = torch.softmax(scores.masked_fill(mask, float("-inf")), dim=-1).nan_to_num(0.0)
    assert torch.allclose(weights, expected, atol=1e-6)
    assert torch.allclose(pooled, (expected.unsqueeze(-1) * values).sum(1), atol=1e-6)
    assert (pooled[2] == 0).all() and (weights[2] == 0).all()  # fully masked: zeros, not NaN
    # and it is chapter 1's attention(query=u, key=u_i, value=h_i, score=dot_score)
    _, reference = attention(
        layer.context.expand(3, 1, 4), keys, values, mask[:, None, :], score=dot_score
    )
    assert torch.allclose(weights, reference.squeeze(1), atol=1e-6)


def test_additive_score_is_attention_additive_score():
    layer = ContextAttention(input_size=6, attention_size=4, score="additive")
    assert isinstance(layer.score, AdditiveScore)
    pooled, weights = layer(torch.randn(2, 3, 6), torch.zeros(2, 3, dtype=torch.bool))
    assert pooled.shape == (2, 6) and torch.allclose(weights.sum(-1), torch.ones(2))


def test_gradients_do_not_reach_padding_and_are_finite():
    torch.manual_seed(0)
    model = HierarchicalAttentionNetwork(VOCAB, embedding_size=8, hidden_size=6)
    model(_word_ids()).logits.sum().backward()
    for name, parameter in model.named_parameters():
        assert torch.isfinite(parameter.grad).all(), name
    assert (model.embedding.weight.grad[0] == 0).all()  # the <pad> embedding never learns


def test_bigru_ignores_padding_and_zeroes_empty_sequences():
    torch.manual_seed(0)
    encoder = BiGRUEncoder(4, 3)
    inputs = torch.randn(2, 4, 4)
    mask = torch.tensor([[False, False, True, True], [True, True, True, True]])
    outputs = encoder(inputs, mask)
    assert outputs.shape == (2, 4, 6)
    assert (outputs[0, 2:] == 0).all() and (outputs[1] == 0).all()
    alone = encoder(inputs[:1, :2], mask[:1, :2])
    assert torch.allclose(
        alone, outputs[:1, :2], atol=1e-6
    )  # the backward GRU starts at the last real word


def test_bad_input_gives_clear_errors():
    model = HierarchicalAttentionNetwork(VOCAB, embedding_size=8, hidden_size=6)
    with pytest.raises(
        ValueError, match=r"word_ids must have shape \(documents, sentences, words\)"
    ):
        model(torch.zeros(2, 5, dtype=torch.long))
    with pytest.raises(TypeError, match="word_ids must be a torch.long tensor"):
        model(torch.zeros(2, 3, 5))
    with pytest.raises(
        ValueError, match=r"word_padding_mask must have shape \(2, 3, 5\).*got \(2, 3, 4\)"
    ):
        model(_word_ids(), torch.zeros(2, 3, 4, dtype=torch.bool))
    with pytest.raises(TypeError, match="word_padding_mask must be a bool tensor"):
        model(_word_ids(), torch.zeros(2, 3, 5))
    with pytest.raises(ValueError, match="score must be one of"):
        HierarchicalAttentionNetwork(VOCAB, score="cosine")
    with pytest.raises(ValueError, match="pooling must be one of"):
        HierarchicalAttentionNetwork(VOCAB, pooling="max")
    with pytest.raises(ValueError, match=r"values must have shape \(batch, length, features\)"):
        ContextAttention(6, 4)(torch.randn(5, 6), torch.zeros(5, dtype=torch.bool))
    with pytest.raises(ValueError, match=r"values must have shape"):
        MeanPooling()(torch.randn(5, 6), torch.zeros(5, dtype=torch.bool))


def test_padding_anywhere_is_skipped_like_padding_at_the_end():
    """An empty sentence in the middle of a document, or a padded word in the middle of a sentence,
    is never read: the same logits as the document with its padding moved to the end, and the
    empty sentence gets weight 0 (before issue 34 the GRU read the empty sentence instead)."""
    torch.manual_seed(0)
    model = HierarchicalAttentionNetwork(VOCAB, hidden_size=4, embedding_size=3).eval()
    gaps = torch.tensor([[[3, 0, 4, 5], [0, 0, 0, 0], [6, 7, 0, 0], [8, 0, 0, 9]]])
    packed = torch.tensor([[[3, 4, 5, 0], [6, 7, 0, 0], [8, 9, 0, 0], [0, 0, 0, 0]]])
    with torch.no_grad():
        a, b = model(gaps), model(packed)
    assert torch.allclose(a.logits, b.logits, atol=1e-6)
    assert torch.allclose(a.sentence_weights[0, [0, 2, 3, 1]], b.sentence_weights[0], atol=1e-6)
    assert a.sentence_weights[0, 1] == 0 and a.word_weights[0, 0, 1] == 0
