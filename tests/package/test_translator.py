"""Chapter 6's translator: Seq2SeqTransformer and the warm-up schedule (chapter 6 checks its decoders)."""

import math

import pytest
import torch

from attention_to_bert.translator import Seq2SeqTransformer, beam_step, noam_schedule

PAD, BOS = 0, 2


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


def test_the_masks_come_from_the_padding_ids():
    model = small_model().eval()
    source = torch.tensor([[5, 6, 7, 0, 0], [8, 9, 0, 0, 0]])
    target = torch.randint(4, 15, (2, 3))
    with torch.no_grad():
        out = model(source, target)
        memory, _ = model.encode(source)
        by_parts, _, _ = model.decode(target, memory, source)
        # a padded source position's id changed to another: the same output
        other = source.masked_fill(source == model.pad_id, 4)
        unmasked, _, _ = model.decode(target, memory, other)
    assert torch.equal(out.logits, by_parts)
    assert not torch.allclose(unmasked, by_parts)  # the padding was masked
    logits, attentions = out  # unpacks as it used to
    assert logits is out["logits"] and attentions["cross"] is out.cross_attentions
    assert attentions["cross"][0][1, :, :, 2:].abs().max() == 0
    with pytest.raises(TypeError, match="src_ids"):
        model.decode(target, memory)  # the source's padding is needed
    with pytest.raises(ValueError, match="memory"):
        model.decode(target, memory[:, :4], source)  # a memory of another length


def test_the_defaults_are_the_chapters_sizes():
    model = Seq2SeqTransformer(10, 10)
    layer = model.transformer.encoder_layers[0]
    assert layer.linear1.out_features == 128 and model.d_model == 64
    assert not any(m.p for m in model.modules() if isinstance(m, torch.nn.Dropout))


def _chapter_6_step(scores, log_probs, beam_size):
    """The four lines chapter 6's beam_search had before it called beam_step."""
    candidates = (scores[:, None] + log_probs).flatten()
    top_scores, top_indices = candidates.topk(min(beam_size, candidates.numel()))
    vocab = log_probs.shape[-1]
    return top_scores, top_indices // vocab, top_indices % vocab


@pytest.mark.parametrize("beams, vocab, beam_size", [(1, 15, 4), (3, 6, 3), (2, 3, 9)])
def test_beam_step_keeps_the_chapters_old_behaviour(beams, vocab, beam_size):
    generator = torch.Generator().manual_seed(beams * vocab)
    scores = -3 * torch.rand(beams, generator=generator)
    log_probs = torch.randn(beams, vocab, generator=generator).log_softmax(dim=-1)
    before = scores.clone(), log_probs.clone()
    got = beam_step(scores, log_probs, beam_size)
    for part, want in zip(got, _chapter_6_step(scores, log_probs, beam_size), strict=True):
        assert torch.equal(part, want)
    assert len(got[0]) == min(beam_size, beams * vocab)
    assert torch.equal(scores, before[0]) and torch.equal(log_probs, before[1])


def test_a_beam_of_one_is_greedy_decoding():
    model = small_model()
    source = torch.tensor([[5, 6, 7, 8, 9]])
    memory, _ = model.encode(source)
    prefix, score = torch.tensor([[BOS]]), torch.zeros(1)
    greedy = torch.tensor([[BOS]])
    with torch.no_grad():
        for _ in range(6):
            logits, _, _ = model.decode(prefix, memory, source)
            score, beam_ids, token_ids = beam_step(score, logits[:, -1].log_softmax(-1), 1)
            prefix = torch.cat([prefix[beam_ids], token_ids[:, None]], dim=1)
            greedy_logits, _, _ = model.decode(greedy, memory, source)
            greedy = torch.cat([greedy, greedy_logits[:, -1].argmax(-1, keepdim=True)], dim=1)
    assert torch.equal(prefix, greedy)
    assert torch.allclose(
        score,
        model(source, greedy[:, :-1])[0].log_softmax(-1).gather(-1, greedy[:, 1:, None]).sum(),
        atol=1e-5,
    )


def test_beam_step_names_bad_arguments():
    with pytest.raises(ValueError, match="scores must have shape"):
        beam_step(torch.zeros(2), torch.zeros(3, 5), 2)
    with pytest.raises(ValueError, match="beam_size"):
        beam_step(torch.zeros(3), torch.zeros(3, 5), 0)
    with pytest.raises(ValueError, match="log_probs must have shape"):
        beam_step(torch.zeros(3), torch.zeros(15), 2)
