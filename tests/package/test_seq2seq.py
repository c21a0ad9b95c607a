"""Tests of seq2seq.py: shapes, the source padding mask, the scores, greedy decoding and clear errors."""

import random

import pytest
import torch

from attention_to_bert import set_seed
from attention_to_bert.attention import AdditiveScore, GeneralScore, attention
from attention_to_bert.data.dates import date_splits, encode_pairs
from attention_to_bert.data.vocabulary import EOS
from attention_to_bert.seq2seq import (
    Decoder,
    Encoder,
    Seq2Seq,
    exact_match,
    fit,
    greedy_decode,
    translate,
)

PAIRS = [
    ("3 jun 2004", "2004-06-03"),
    ("sunday, july 8, 2035", "2035-07-08"),
    ("10.03.2037", "2037-03-10"),
]


@pytest.fixture
def vocabs():
    splits = date_splits(num_train=1, num_test=1)
    return splits.source_vocab, splits.target_vocab


def model_for(vocabs, score="additive", seed=0):
    set_seed(seed, num_threads=1)  # tiny tensors: a second thread only adds overhead
    return Seq2Seq(*vocabs, score=score, embedding_size=8, hidden_size=6).double().eval()


@pytest.mark.parametrize("score", ["additive", "dot", "general", None])
def test_shapes_of_teacher_forcing(vocabs, score):
    model = model_for(vocabs, score)
    source, lengths, target = encode_pairs(PAIRS, *vocabs)
    logits, weights = model(source, lengths, target[:, :-1])
    assert logits.shape == (3, 11, len(vocabs[1]))
    if score is None:
        assert weights is None
    else:
        assert weights.shape == (3, 11, 20)
        torch.testing.assert_close(weights.sum(-1), torch.ones(3, 11, dtype=torch.float64))


def test_encoder_ignores_padding(vocabs):
    set_seed(0, num_threads=1)
    encoder = Encoder(len(vocabs[0]), 8, 5).double()
    source, lengths, _ = encode_pairs(PAIRS, *vocabs)
    outputs, final = encoder(source, lengths)
    assert outputs.shape == (3, 20, 10) and final.shape == (3, 10)
    assert (outputs[0, 10:] == 0).all() and (outputs[0, :10] != 0).any(dim=-1).all()
    alone, alone_final = encoder(source[:1, :10], lengths[:1])  # the same sentence without padding
    torch.testing.assert_close(outputs[0, :10], alone[0])
    torch.testing.assert_close(final[0], alone_final[0])
    # final = [last forward state, backward state at the first token]
    torch.testing.assert_close(final[0], torch.cat([alone[0, -1, :5], alone[0, 0, 5:]]))


@pytest.mark.parametrize("score", ["additive", "dot", "general"])
def test_padded_source_positions_get_zero_attention_and_change_nothing(vocabs, score):
    model = model_for(vocabs, score)
    source, lengths, target = encode_pairs(PAIRS, *vocabs)
    logits, weights = model(source, lengths, target[:, :-1])
    for row, length in enumerate(lengths.tolist()):
        assert (weights[row, :, length:] == 0).all()
        assert (weights[row, :, :length] > 0).all()
    # the first pair on its own (no padding at all) gives the same logits and weights
    alone_logits, alone_weights = model(source[:1, :10], lengths[:1], target[:1, :-1])
    torch.testing.assert_close(logits[0], alone_logits[0])
    torch.testing.assert_close(weights[0, :, :10], alone_weights[0])


def test_attention_step_matches_the_formula(vocabs):
    """alpha_t = softmax_j(s_{t-1} . h_j) over the real positions, c_t = sum_j alpha_tj h_j (dot score)."""
    model = model_for(vocabs, "dot")
    source, lengths, _ = encode_pairs(PAIRS, *vocabs)
    outputs, final, mask = model.encode(source, lengths)
    state = torch.randn(3, 12, dtype=torch.float64)
    context, weights = model.decoder.context(state, outputs, final, mask)
    for row, length in enumerate(lengths.tolist()):
        expected = torch.softmax(outputs[row, :length] @ state[row], dim=0)
        torch.testing.assert_close(weights[row, :length], expected)
        torch.testing.assert_close(context[row], expected @ outputs[row, :length])


@pytest.mark.parametrize("score", ["additive", "general", "dot"])
def test_keys_projected_once_give_the_scores_formula(vocabs, score):
    model = model_for(vocabs, score)
    decoder = model.decoder
    if score != "dot":
        assert isinstance(decoder.score, AdditiveScore if score == "additive" else GeneralScore)
    source, lengths, _ = encode_pairs(PAIRS, *vocabs)
    outputs, final, mask = model.encode(source, lengths)
    state = torch.randn(3, 12, dtype=torch.float64)
    expected = attention(state[:, None], outputs, outputs, mask[:, None], score=decoder.score)
    keys = decoder.project_keys(outputs)
    for given in (None, keys):
        context, weights = decoder.context(state, outputs, final, mask, given)
        torch.testing.assert_close(context, expected[0][:, 0], rtol=0, atol=1e-12)
        torch.testing.assert_close(weights, expected[1][:, 0], rtol=0, atol=1e-12)
    torch.testing.assert_close(
        decoder._score(state[:, None], keys), decoder.score(state[:, None], outputs)
    )
    if score == "additive":  # the score module's own formula, bit for bit (no copy in the decoder)
        query = decoder.score.query_projection(state[:, None]).unsqueeze(-2)
        by_hand = decoder.score.v(torch.tanh(query + keys.unsqueeze(-3))).squeeze(-1)
        assert torch.equal(decoder._score(state[:, None], keys), by_hand)


def test_without_attention_the_context_is_the_encoder_final_state(vocabs):
    model = model_for(vocabs, None)
    source, lengths, _ = encode_pairs(PAIRS, *vocabs)
    outputs, final, mask = model.encode(source, lengths)
    context, weights = model.decoder.context(
        torch.zeros(3, 12, dtype=torch.float64), outputs, final, mask
    )
    assert weights is None and torch.equal(context, final)


@pytest.mark.parametrize("score", ["additive", "dot", "general", None])
def test_teacher_forcing_equals_calling_step_at_every_position(vocabs, score):
    """forward() hoists the embeddings and the output layer out of the loop; it must still equal step()."""
    model = model_for(vocabs, score)
    source, lengths, target = encode_pairs(PAIRS, *vocabs)
    logits, weights = model(source, lengths, target[:, :-1])
    outputs, final, mask = model.encode(source, lengths)
    state = model.decoder.start(final)
    for t in range(target.shape[1] - 1):
        step_logits, state, step_weights = model.decoder.step(
            target[:, t], state, outputs, final, mask
        )
        torch.testing.assert_close(logits[:, t], step_logits, rtol=0, atol=1e-12)
        if score is not None:
            torch.testing.assert_close(weights[:, t], step_weights, rtol=0, atol=1e-12)


@pytest.mark.parametrize("score", ["additive", None])
def test_greedy_decode_agrees_with_teacher_forcing_on_its_own_output(vocabs, score):
    model = model_for(vocabs, score, seed=1)
    source, lengths, _ = encode_pairs(PAIRS, *vocabs)
    tokens, weights = greedy_decode(model, source, max_length=6)
    assert tokens.shape == (3, 6)  # an untrained model rarely stops: max_length caps it
    bos = torch.full((3, 1), model.bos_id)
    logits, forced_weights = model(source, lengths, torch.cat([bos, tokens[:, :-1]], dim=1))
    assert torch.equal(logits.argmax(-1), tokens)
    if score is None:
        assert weights is None
    else:
        assert weights.shape == (3, 6, 20)
        torch.testing.assert_close(weights, forced_weights)


def test_greedy_decode_stops_at_eos_and_pads_after_it(vocabs):
    model = model_for(vocabs, "additive")
    eos = model.eos_id
    with (
        torch.no_grad()
    ):  # make the output layer say <eos> for the first row only: bias on its embedding
        model.decoder.output.weight.zero_()
        model.decoder.output.bias.zero_()
        model.decoder.output.bias[vocabs[1].stoi["7"]] = 1.0
    source, lengths, _ = encode_pairs(PAIRS, *vocabs)
    tokens, _ = greedy_decode(model, source, max_length=4)
    assert tokens.shape == (3, 4) and (tokens == vocabs[1].stoi["7"]).all()
    with torch.no_grad():
        model.decoder.output.bias[eos] = 2.0
    tokens, weights = greedy_decode(model, source, max_length=9)
    assert tokens.shape == (3, 1) and (tokens == eos).all()
    assert translate(model, [s for s, _ in PAIRS]) == ["", "", ""]
    assert vocabs[1].itos[eos] == EOS


def test_fit_lowers_the_loss_and_learns_a_tiny_copy_task(vocabs):
    set_seed(0, num_threads=1)
    digits = vocabs[1]  # digits are in both alphabets
    model = Seq2Seq(digits, digits, score="dot", embedding_size=8, hidden_size=16)
    rng = random.Random(0)
    pairs = [(digits, digits) for digits in (str(rng.randrange(10, 1000)) for _ in range(256))]
    losses, seconds = fit(model, pairs, epochs=10, batch_size=64, lr=2e-2)
    assert len(losses) == 40 and seconds > 0
    assert sum(losses[-10:]) / 10 < 0.5 * sum(losses[:10]) / 10
    predicted = translate(model, [s for s, _ in pairs[:50]])
    assert exact_match(predicted, [t for _, t in pairs[:50]]) > 0.5


def test_exact_match():
    assert exact_match(["2001-01-01", "2001-01-02"], ["2001-01-01", "2001-01-03"]) == 0.5
    with pytest.raises(ValueError, match="equally long"):
        exact_match(["a"], ["a", "b"])


def test_bad_arguments_give_clear_errors(vocabs):
    with pytest.raises(ValueError, match="score must be one of"):
        Seq2Seq(*vocabs, score="cosine")
    with pytest.raises(ValueError, match="dot score needs hidden_size == encoder_size"):
        Decoder(10, 4, 8, 6, score="dot")
    with pytest.raises(ValueError, match="hidden_size must be >= 1"):
        Seq2Seq(*vocabs, hidden_size=0)
    with pytest.raises(TypeError, match="target_vocab must be a Vocabulary"):
        Seq2Seq(vocabs[0], "0123456789-")
    model = model_for(vocabs)
    source, lengths, target = encode_pairs(PAIRS, *vocabs)
    with pytest.raises(TypeError, match="source must be a torch.long tensor"):
        model(source.float(), lengths, target)
    with pytest.raises(ValueError, match=r"lengths must lie in 1..20"):
        model(source, torch.tensor([10, 21, 10]), target)
    with pytest.raises(ValueError, match=r"lengths must have shape \(batch,\) = \(3,\)"):
        model(source, lengths[:2], target)
    with pytest.raises(ValueError, match=r"target_in must have 3 rows, >= 1 step, got \(2, "):
        model(source, lengths, target[:2])
    with pytest.raises(ValueError, match="max_length must be >= 1"):
        greedy_decode(model, source, max_length=0)
    with pytest.raises(TypeError, match="sources must be a list of strings"):
        translate(model, "3 jun 2004")


def test_fit_prints_evaluate_in_its_log_every_log_every_steps(vocabs, capsys):
    set_seed(0, num_threads=1)
    digits = vocabs[1]
    model = Seq2Seq(digits, digits, score=None, embedding_size=8, hidden_size=16)
    pairs = [("123", "321"), ("45", "54"), ("6789", "9876"), ("10", "01")] * 4
    calls = []

    def evaluate(candidate):
        calls.append(candidate.training)  # called in eval mode
        return 0.25 * len(calls)

    losses, _ = fit(model, pairs, epochs=3, batch_size=4, log_every=6, evaluate=evaluate)
    assert len(losses) == 12 and calls == [False, False]
    log = capsys.readouterr().out.splitlines()
    assert len(log) == 2 and "eval 0.2500" in log[0] and "eval 0.5000" in log[1]


def test_translate_gives_the_same_output_at_any_batch_size(vocabs):
    """An untrained model rarely says <eos>, so its outputs run to the cap, which is each source's
    own length + 2 tokens, not the longest source's in its batch (issue 34)."""
    model = model_for(vocabs).float()
    sources = ["3 jun 2004", "1.1.2000", "sunday, july 8, 2035", "may 1 2001"]
    alone = translate(model, sources, batch_size=1)
    assert translate(model, sources, batch_size=1000) == alone
    assert all(len(out) <= len(source) + 2 for out, source in zip(alone, sources, strict=True))


def test_greedy_decode_of_no_sentence_gives_float_weights(vocabs):
    model = model_for(vocabs)
    tokens, weights = greedy_decode(model, torch.ones(0, 4, dtype=torch.long))
    assert tokens.shape == (0, 0) and weights.shape == (0, 0, 4)
    assert weights.dtype == torch.float64  # the model's, as for any other batch
