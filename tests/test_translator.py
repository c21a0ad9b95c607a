"""Chapter 6's translator: Seq2SeqTransformer, greedy decoding, beam search and the warm-up schedule."""

import math

import pytest
import torch

from attention_to_bert.translator import (
    Seq2SeqTransformer,
    beam_search,
    greedy_decode,
    noam_schedule,
)

PAD, BOS, EOS = 0, 2, 3


def small_model(**overrides) -> Seq2SeqTransformer:
    torch.manual_seed(0)
    settings = dict(
        src_vocab_size=20,
        tgt_vocab_size=15,
        d_model=32,
        num_heads=4,
        num_layers=2,
        d_ff=64,
        dropout=0.0,
        max_len=32,
        pad_id=PAD,
    )
    settings.update(overrides)
    return Seq2SeqTransformer(**settings).eval()


def test_shapes_of_logits_and_attention():
    model = small_model()
    src = torch.randint(4, 20, (3, 7))
    tgt_in = torch.randint(4, 15, (3, 5))
    logits, attentions = model(src, tgt_in)
    assert logits.shape == (3, 5, 15)
    assert set(attentions) == {"encoder", "decoder", "cross"}
    assert [tuple(w.shape) for w in attentions["encoder"]] == [(3, 4, 7, 7)] * 2
    assert [tuple(w.shape) for w in attentions["decoder"]] == [(3, 4, 5, 5)] * 2
    assert [tuple(w.shape) for w in attentions["cross"]] == [(3, 4, 5, 7)] * 2


def test_embeddings_are_scaled_so_that_entries_have_unit_scale():
    model = small_model(d_model=64)
    ids = torch.arange(4, 15)
    scaled = model.tgt_embedding(ids) * math.sqrt(model.d_model)
    assert (
        0.8 < scaled.std().item() < 1.2
    )  # comparable to the positional encoding's entries in [-1, 1]
    assert torch.count_nonzero(model.src_embedding.weight[PAD]) == 0


def test_source_padding_changes_nothing_and_gets_no_attention():
    model = small_model()
    src = torch.randint(4, 20, (2, 6))
    tgt_in = torch.randint(4, 15, (2, 4))
    padded = torch.cat([src, torch.full((2, 3), PAD)], dim=1)
    logits, _ = model(src, tgt_in)
    logits_padded, attentions = model(padded, tgt_in)
    torch.testing.assert_close(logits_padded, logits, atol=1e-5, rtol=1e-5)
    for weights in attentions["encoder"] + attentions["cross"]:
        assert weights[..., 6:].abs().max() == 0


def test_target_padding_is_masked_in_decoder_self_attention():
    model = small_model()
    src = torch.randint(4, 20, (1, 6))
    tgt_in = torch.tensor([[BOS, 5, 6, PAD, PAD]])
    logits, attentions = model(src, tgt_in)
    short_logits, _ = model(src, tgt_in[:, :3])
    torch.testing.assert_close(logits[:, :3], short_logits, atol=1e-5, rtol=1e-5)
    for weights in attentions["decoder"]:
        assert weights[..., 3:].abs().max() == 0


def test_decoder_is_causal_a_future_token_does_not_change_earlier_logits():
    model = small_model()
    src = torch.randint(4, 20, (2, 6))
    tgt_in = torch.randint(4, 15, (2, 6))
    changed = tgt_in.clone()
    changed[:, 4] = (changed[:, 4] + 1 - 4) % 11 + 4
    logits, attentions = model(src, tgt_in)
    logits_changed, _ = model(src, changed)
    torch.testing.assert_close(logits_changed[:, :4], logits[:, :4], atol=1e-6, rtol=1e-6)
    assert (
        logits_changed[:, 4:] - logits[:, 4:]
    ).abs().max() > 1e-4  # ... but later ones do change
    for weights in attentions["decoder"]:
        assert weights.triu(diagonal=1).abs().max() == 0


def test_bad_inputs_give_clear_errors():
    model = small_model()
    with pytest.raises(TypeError, match="torch.long"):
        model(torch.rand(2, 5), torch.randint(4, 15, (2, 3)))
    with pytest.raises(ValueError, match="shape \\(batch, length\\)"):
        model(torch.randint(4, 20, (5,)), torch.randint(4, 15, (2, 3)))
    with pytest.raises(ValueError, match="same batch size"):
        model(torch.randint(4, 20, (2, 5)), torch.randint(4, 15, (3, 3)))
    with pytest.raises(ValueError, match=r"must lie in \[0, 20\)"):
        model(torch.full((1, 5), 20), torch.randint(4, 15, (1, 3)))
    with pytest.raises(ValueError, match="longer than max_len=32"):
        model(torch.randint(4, 20, (1, 33)), torch.randint(4, 15, (1, 3)))
    with pytest.raises(ValueError, match="pad_id"):
        Seq2SeqTransformer(10, 10, pad_id=10)
    with pytest.raises(ValueError, match="max_length must be >= 1"):
        greedy_decode(model, torch.randint(4, 20, (1, 5)), max_length=0)
    with pytest.raises(ValueError, match="one sequence"):
        beam_search(model, torch.randint(4, 20, (2, 5)), max_length=5)


class _Scripted(Seq2SeqTransformer):
    """A model whose decoder emits a fixed script per row, to test the decoding loops."""

    def __init__(self, scripts: list[list[int]]) -> None:
        super().__init__(
            10, 10, d_model=8, num_heads=2, num_layers=1, d_ff=8, dropout=0.0, max_len=16
        )
        self.scripts = scripts

    def decode(self, tgt_in_ids, memory, src_ids):
        steps = tgt_in_ids.shape[1]
        logits = torch.full((tgt_in_ids.shape[0], steps, 10), -10.0)
        for row, script in enumerate(self.scripts):
            logits[row, -1, script[min(steps - 1, len(script) - 1)]] = 10.0
        return logits, [], []


def test_greedy_decode_stops_at_eos_and_pads_after_it():
    model = _Scripted([[5, 6, EOS, 7, 7], [5, EOS, 8, 8, 8]])
    out, _ = greedy_decode(model, torch.randint(4, 10, (2, 4)), max_length=10)
    assert out.tolist() == [[5, 6, EOS], [5, EOS, PAD]]  # stopped once both rows made <eos>
    never = _Scripted([[5, 6, 7]])
    assert greedy_decode(never, torch.randint(4, 10, (1, 4)), max_length=4)[0].tolist() == [
        [5, 6, 7, 7]
    ]


def test_greedy_decode_returns_the_cross_attention_that_chose_each_token():
    model = small_model()
    src = torch.randint(4, 20, (3, 6))
    out, weights = greedy_decode(model, src, max_length=8)
    _, attentions = model(src, torch.cat([torch.full((3, 1), BOS), out[:, :-1]], dim=1))
    assert weights.shape == (3, 4, out.shape[1], 6)
    torch.testing.assert_close(weights, attentions["cross"][-1])


def test_greedy_decode_agrees_with_teacher_forcing_on_its_own_output():
    model = small_model()
    src = torch.randint(4, 20, (3, 6))
    out = greedy_decode(model, src, max_length=8)[0]
    logits, _ = model(src, torch.cat([torch.full((3, 1), BOS), out[:, :-1]], dim=1))
    for row in range(3):
        ended = (out[row] == EOS).nonzero()
        stop = int(ended[0]) + 1 if len(ended) else out.shape[1]
        assert torch.equal(logits[row, :stop].argmax(-1), out[row, :stop])


def test_beam_search_with_one_beam_is_greedy_and_scores_are_sorted():
    model = small_model()
    src = torch.randint(4, 20, (1, 6))
    greedy = greedy_decode(model, src, max_length=8)[0][0].tolist()
    (best, _), *_ = beam_search(model, src, max_length=8, beam_size=1)
    assert best == greedy[: len(best)]
    hypotheses = beam_search(model, src, max_length=8, beam_size=4)
    scores = [score for _, score in hypotheses]
    assert scores == sorted(scores, reverse=True) and all(score <= 0 for score in scores)


def test_beam_search_finds_a_better_sequence_than_greedy():
    # step 1: greedy takes 5 (p=0.6) over 6 (p=0.4); after 5 the model is unsure, after 6 it is sure of <eos>
    class Trap(Seq2SeqTransformer):
        def __init__(self):
            super().__init__(
                10, 10, d_model=8, num_heads=2, num_layers=1, d_ff=8, dropout=0.0, max_len=16
            )

        def decode(self, tgt_in_ids, memory, src_ids):
            probs = torch.full((tgt_in_ids.shape[0], tgt_in_ids.shape[1], 10), 1e-6)
            for row, prefix in enumerate(tgt_in_ids.tolist()):
                last = prefix[-1]
                if last == BOS:
                    probs[row, -1, 5], probs[row, -1, 6] = 0.6, 0.4
                elif last == 5:
                    probs[row, -1, 7], probs[row, -1, 8], probs[row, -1, EOS] = 0.3, 0.3, 0.3
                else:
                    probs[row, -1, EOS] = 1.0
            return probs.log(), [], []

    model = Trap()
    src = torch.randint(4, 10, (1, 4))
    assert greedy_decode(model, src, max_length=5)[0][0].tolist()[:2] == [5, EOS]  # ties: first max
    best, score = beam_search(model, src, max_length=5, beam_size=2)[0]
    assert best == [6, EOS] and score == pytest.approx(math.log(0.4), abs=1e-4)


def test_noam_schedule_rises_linearly_peaks_at_warmup_then_decays():
    rate = noam_schedule(512, 4000)
    rates = [rate(step) for step in range(1, 20001)]
    assert max(range(len(rates)), key=rates.__getitem__) + 1 == 4000
    assert rate(4000) == pytest.approx(512**-0.5 * 4000**-0.5)
    assert rate(2000) == pytest.approx(rate(4000) / 2)  # linear warm-up
    assert rate(16000) == pytest.approx(rate(4000) / 2)  # 1/sqrt(step) decay
    assert rate(0) == rate(1) > 0  # LambdaLR calls it with step 0 first
    assert noam_schedule(64, 100, factor=2.0)(50) == pytest.approx(2 * noam_schedule(64, 100)(50))


def test_noam_schedule_drives_lambda_lr():
    parameter = torch.nn.Parameter(torch.zeros(1))
    optimizer = torch.optim.Adam([parameter], lr=1.0)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, noam_schedule(64, 10))
    seen = []
    for _ in range(30):
        seen.append(optimizer.param_groups[0]["lr"])
        optimizer.step()
        scheduler.step()
    assert seen[10] == pytest.approx(64**-0.5 * 10**-0.5) and seen[10] == max(seen)


def test_noam_schedule_rejects_bad_arguments():
    with pytest.raises(ValueError, match="d_model"):
        noam_schedule(0, 10)
    with pytest.raises(ValueError, match="warmup_steps"):
        noam_schedule(64, 0)
    with pytest.raises(ValueError, match="factor"):
        noam_schedule(64, 10, factor=0)
