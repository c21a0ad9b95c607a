"""The chapter 6 checkers accept right answers and name each typical wrong one."""

import math

import torch
from grading import fresh_inputs

from attention_to_bert import checks
from attention_to_bert.multihead import MultiHeadAttention
from attention_to_bert.transformer import DecoderLayer, EncoderLayer

# --- cross_attention ---


def right_cross(a, memory, memory_key_padding_mask, w_q, w_k, w_v):
    q, k, v = a @ w_q, memory @ w_k, memory @ w_v
    scores = q @ k.transpose(1, 2) / math.sqrt(k.shape[-1])
    scores = scores.masked_fill(memory_key_padding_mask[:, None, :], float("-inf"))
    weights = scores.softmax(dim=-1)
    return weights @ v, weights


def sdpa_cross(a, memory, memory_key_padding_mask, w_q, w_k, w_v):
    # F.scaled_dot_product_attention takes True = MAY attend: the opposite convention
    q, k, v = a @ w_q, memory @ w_k, memory @ w_v
    allowed = ~memory_key_padding_mask[:, None, :]
    output = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=allowed)
    scores = (q @ k.transpose(1, 2) / math.sqrt(k.shape[-1])).masked_fill(~allowed, -1e9)
    return output, scores.softmax(-1)


def in_place_masking(a, memory, memory_key_padding_mask, w_q, w_k, w_v):
    memory.masked_fill_(memory_key_padding_mask[..., None], 0.0)  # edits the caller's memory
    return right_cross(a, memory, memory_key_padding_mask, w_q, w_k, w_v)


def unscaled(a, memory, memory_key_padding_mask, w_q, w_k, w_v):
    scores = (a @ w_q) @ (memory @ w_k).transpose(1, 2)
    weights = scores.masked_fill(memory_key_padding_mask[:, None, :], float("-inf")).softmax(-1)
    return weights @ (memory @ w_v), weights


def scaled_by_d_model(a, memory, memory_key_padding_mask, w_q, w_k, w_v):
    scores = (a @ w_q) @ (memory @ w_k).transpose(1, 2) / math.sqrt(a.shape[-1])
    weights = scores.masked_fill(memory_key_padding_mask[:, None, :], float("-inf")).softmax(-1)
    return weights @ (memory @ w_v), weights


def no_mask(a, memory, memory_key_padding_mask, w_q, w_k, w_v):
    q, k, v = a @ w_q, memory @ w_k, memory @ w_v
    weights = (q @ k.transpose(1, 2) / math.sqrt(k.shape[-1])).softmax(-1)
    return weights @ v, weights


def inverted_mask(a, memory, memory_key_padding_mask, w_q, w_k, w_v):
    return right_cross(a, memory, ~memory_key_padding_mask, w_q, w_k, w_v)


def queries_from_memory(a, memory, memory_key_padding_mask, w_q, w_k, w_v):
    q, k = memory @ w_q, a @ w_k
    weights = (q @ k.transpose(1, 2) / math.sqrt(k.shape[-1])).softmax(-1)
    return weights @ (a @ w_v), weights


def mixes_memory(a, memory, memory_key_padding_mask, w_q, w_k, w_v):
    _, weights = right_cross(a, memory, memory_key_padding_mask, w_q, w_k, w_v)
    return weights @ memory, weights


def mixes_keys(a, memory, memory_key_padding_mask, w_q, w_k, w_v):
    _, weights = right_cross(a, memory, memory_key_padding_mask, w_q, w_k, w_v)
    return weights @ (memory @ w_k), weights


def softmax_over_queries(a, memory, memory_key_padding_mask, w_q, w_k, w_v):
    q, k, v = a @ w_q, memory @ w_k, memory @ w_v
    scores = q @ k.transpose(1, 2) / math.sqrt(k.shape[-1])
    weights = scores.masked_fill(memory_key_padding_mask[:, None, :], -1e9).softmax(dim=1)
    return weights @ v, weights


def only_weights(a, memory, memory_key_padding_mask, w_q, w_k, w_v):
    return right_cross(a, memory, memory_key_padding_mask, w_q, w_k, w_v)[1]


def stub(a, memory, memory_key_padding_mask, w_q, w_k, w_v):
    return None, None


def test_cross_attention_accepts_right_answers(capsys):
    for candidate in (right_cross, sdpa_cross):
        assert checks.cross_attention(candidate), candidate.__name__
    assert "passes all 4 test cases" in capsys.readouterr().out


def test_cross_attention_agrees_with_the_package():
    # the checker's reference is one head of our MultiHeadAttention without biases
    torch.manual_seed(0)
    attention = MultiHeadAttention(8, 1, bias=False)
    a, memory = torch.randn(2, 3, 8), torch.randn(2, 5, 8)
    padded = torch.tensor([[False] * 5, [False] * 3 + [True] * 2])
    with torch.no_grad():
        output, weights = attention(a, memory, memory, key_padding_mask=padded)
        mine, my_weights = right_cross(
            a,
            memory,
            padded,
            *(p.weight.T for p in (attention.q_proj, attention.k_proj, attention.v_proj)),
        )
        mine = attention.out_proj(mine)
    assert torch.allclose(weights[:, 0], my_weights, atol=1e-6)
    assert torch.allclose(output, mine, atol=1e-5)


def test_cross_attention_names_the_mistake(capsys):
    expectations = [
        (in_place_masking, "the input `memory` was modified in place"),
        (unscaled, "not divided by sqrt(d_k)"),
        (scaled_by_d_model, "divided by sqrt(d_model)"),
        (no_mask, "masked (padded) positions get weight"),
        (inverted_mask, "mask polarity inverted"),
        (queries_from_memory, "the queries must come from the decoder"),
        (mixes_memory, "mixes the memory itself"),
        (mixes_keys, "mixes the keys"),
        (softmax_over_queries, "the softmax runs over the queries"),
        (only_weights, "expected a pair (output, weights)"),
        (stub, "returned None"),
    ]
    for candidate, message in expectations:
        assert not checks.cross_attention(candidate), candidate.__name__
        assert message in capsys.readouterr().out, candidate.__name__


# --- beam_step ---


def right_beam(scores, log_probs, beam_size):
    vocab = log_probs.shape[-1]
    values, index = (scores[:, None] + log_probs).flatten().topk(beam_size)
    return values, index // vocab, index % vocab


def sorting_beam(scores, log_probs, beam_size):
    totals = (scores[:, None] + log_probs).flatten()
    order = totals.argsort(descending=True)[:beam_size]
    return totals[order], order // log_probs.shape[1], order % log_probs.shape[1]


def in_place_beam(scores, log_probs, beam_size):
    log_probs += scores[:, None]
    vocab = log_probs.shape[-1]
    values, index = log_probs.flatten().topk(beam_size)
    return values, index // vocab, index % vocab


def no_prefix(scores, log_probs, beam_size):
    return right_beam(torch.zeros_like(scores), log_probs, beam_size)


def multiplied(scores, log_probs, beam_size):
    vocab = log_probs.shape[-1]
    values, index = (scores[:, None] * log_probs).flatten().topk(beam_size)
    return values, index // vocab, index % vocab


def smallest(scores, log_probs, beam_size):
    vocab = log_probs.shape[-1]
    values, index = (scores[:, None] + log_probs).flatten().topk(beam_size, largest=False)
    return values, index // vocab, index % vocab


def swapped_ids(scores, log_probs, beam_size):
    values, beams, tokens = right_beam(scores, log_probs, beam_size)
    vocab = log_probs.shape[-1]
    index = beams * vocab + tokens
    return values, index % vocab, index // vocab


def per_beam(scores, log_probs, beam_size):
    values, tokens = (scores[:, None] + log_probs).topk(beam_size, dim=-1)
    beams = torch.arange(len(scores))[:, None].expand_as(tokens)
    return values, beams, tokens


def unsorted(scores, log_probs, beam_size):
    values, beams, tokens = right_beam(scores, log_probs, beam_size)
    return values.flip(0), beams.flip(0), tokens.flip(0)


def a_pair(scores, log_probs, beam_size):
    return right_beam(scores, log_probs, beam_size)[:2]


def test_beam_step_accepts_right_answers(capsys):
    for candidate in (right_beam, sorting_beam):
        assert checks.beam_step(candidate), candidate.__name__
    assert "passes all 4 test cases" in capsys.readouterr().out


def test_beam_step_names_the_mistake(capsys):
    expectations = [
        (in_place_beam, "the input `log_probs` was modified in place"),
        (no_prefix, "the prefix's score is not added"),
        (multiplied, "log-probabilities add"),
        (smallest, "worst candidates"),
        (swapped_ids, "beam and token swapped"),
        (per_beam, "ranked on their own"),
        (unsorted, "not best first"),
        (a_pair, "expected a triple"),
    ]
    for candidate, message in expectations:
        assert not checks.beam_step(candidate), candidate.__name__
        assert message in capsys.readouterr().out, candidate.__name__


def test_beam_step_reports_a_wrong_answer_with_the_expected_one(capsys):
    def off_by_one_token(scores, log_probs, beam_size):
        values, beams, tokens = right_beam(scores, log_probs, beam_size)
        return values, beams, tokens + 1

    assert not checks.beam_step(off_by_one_token)
    assert "expected scores" in capsys.readouterr().out


# --- pre_ln_encoder_layer (Exercise 6.2) ---


class TorchPreLN(torch.nn.Module):
    """An independent right answer: torch's own pre-LN layer, given this layer's weights at each call
    (trained mode, dropout 0: torch's fast path would zero the padded positions' outputs)."""

    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.inner = [  # in a list: not one of this module's own submodules
            torch.nn.TransformerEncoderLayer(
                d_model, num_heads, d_ff, dropout=0.0, batch_first=True, norm_first=True
            )
        ]
        ours = EncoderLayer(d_model, num_heads, d_ff)  # only for the submodule names
        for name, module in ours.named_children():
            self.add_module(name, module)

    def forward(self, x, mask=None):
        state = {}
        for name, tensor in self.state_dict().items():
            if "_proj." in name and "out_proj" not in name:
                continue
            state[name] = tensor
        for kind in ("weight", "bias"):
            parts = [self.self_attn.get_parameter(f"{p}_proj.{kind}") for p in "qkv"]
            state[f"self_attn.in_proj_{kind}"] = torch.cat(parts)
        inner = self.inner[0]
        inner.load_state_dict(state)
        padding = None if mask is None else mask[:, 0, 0, :]
        _, weights = self.self_attn(self.norm1(x), self.norm1(x), self.norm1(x), attn_mask=mask)
        return inner.train()(x, src_key_padding_mask=padding), weights


class PreLN(EncoderLayer):
    def forward(self, x, mask=None):
        h = self.norm1(x)
        attended, weights = self.self_attn(h, h, h, attn_mask=mask)
        x = x + attended
        return x + self.feed_forward(self.norm2(x)), weights


class NormalisedResidual(EncoderLayer):
    def forward(self, x, mask=None):
        x = self.norm1(x)
        attended, weights = self.self_attn(x, x, x, attn_mask=mask)
        x = self.norm2(x + attended)
        return x + self.feed_forward(x), weights


class OneNorm(EncoderLayer):
    def forward(self, x, mask=None):
        h = self.norm1(x)
        attended, weights = self.self_attn(h, h, h, attn_mask=mask)
        x = x + attended
        return x + self.feed_forward(self.norm1(x)), weights


class ExtraFinalNorm(PreLN):
    def forward(self, x, mask=None):
        y, weights = super().forward(x, mask)
        return self.norm2(y), weights


class Stub(EncoderLayer):
    def forward(self, x, mask=None): ...


def test_pre_ln_right_answers_pass_visible_and_hidden():
    for right in (PreLN, TorchPreLN):
        assert checks.pre_ln_encoder_layer(right) is True
        with fresh_inputs(2027):
            assert checks.pre_ln_encoder_layer(right) is True


def test_pre_ln_hidden_cases_change_the_sizes(capsys):
    seen = []

    class Recording(PreLN):
        def forward(self, x, mask=None):
            seen.append(tuple(x.shape))
            return super().forward(x, mask)

    checks.pre_ln_encoder_layer(Recording)
    visible, seen[:] = list(seen), []
    with fresh_inputs(2027):
        checks.pre_ln_encoder_layer(Recording)
    assert seen and not set(seen) & set(visible)


def test_pre_ln_wrong_answers_are_named(capsys):
    cases = [
        (EncoderLayer, "post-LN, the paper's order"),
        (NormalisedResidual, "the residual adds the normalised input"),
        (OneNorm, "each sub-layer has its own LayerNorm"),
        (ExtraFinalNorm, "a LayerNorm after the last addition too"),
        (Stub, "returned None"),
        (lambda d_model, heads, d_ff: torch.nn.Linear(d_model, d_ff), "could not give candidate"),
    ]
    for wrong, message in cases:
        assert checks.pre_ln_encoder_layer(wrong) is False
        assert message in capsys.readouterr().out, wrong


# --- transformer_masks ---


def right_masks(src_ids, tgt_in_ids, pad_id):
    n = tgt_in_ids.shape[1]
    later = torch.ones(n, n, dtype=torch.bool).triu(diagonal=1)
    return later | (tgt_in_ids == pad_id)[:, None, None, :], (src_ids == pad_id)[:, None, None, :]


def chapter_five_masks(src_ids, tgt_in_ids, pad_id):  # chapter 5's causal_mask: also right
    from attention_to_bert.masks import causal_mask

    causal = causal_mask(tgt_in_ids.shape[1])[None, None]
    return causal | (tgt_in_ids == pad_id)[:, None, None, :], (src_ids == pad_id)[:, None, None, :]


def no_causal_masks(src_ids, tgt_in_ids, pad_id):
    return (tgt_in_ids == pad_id)[:, None, None, :], (src_ids == pad_id)[:, None, None, :]


def self_blind_masks(src_ids, tgt_in_ids, pad_id):
    n = tgt_in_ids.shape[1]
    blocked = torch.ones(n, n, dtype=torch.bool).triu()
    return blocked | (tgt_in_ids == pad_id)[:, None, None, :], (src_ids == pad_id)[:, None, None, :]


def flipped_masks(src_ids, tgt_in_ids, pad_id):
    decoder, source = right_masks(src_ids, tgt_in_ids, pad_id)
    return ~decoder, ~source


def row_padding_masks(src_ids, tgt_in_ids, pad_id):
    n = tgt_in_ids.shape[1]
    later = torch.ones(n, n, dtype=torch.bool).triu(diagonal=1)
    return later | (tgt_in_ids == pad_id)[:, None, :, None], (src_ids == pad_id)[:, None, None, :]


def causal_only_masks(src_ids, tgt_in_ids, pad_id):
    n = tgt_in_ids.shape[1]
    later = torch.ones(n, n, dtype=torch.bool).triu(diagonal=1)
    return later[None, None], (src_ids == pad_id)[:, None, None, :]


def unmasked_source(src_ids, tgt_in_ids, pad_id):
    decoder, source = right_masks(src_ids, tgt_in_ids, pad_id)
    return decoder, torch.zeros_like(source)


def three_axes(src_ids, tgt_in_ids, pad_id):
    decoder, source = right_masks(src_ids, tgt_in_ids, pad_id)
    return decoder[:, 0], source


def peeking_masks(src_ids, tgt_in_ids, pad_id):  # sees one token ahead: the leak test sees it
    n = tgt_in_ids.shape[1]
    later = torch.ones(n, n, dtype=torch.bool).triu(diagonal=2)
    return later | (tgt_in_ids == pad_id)[:, None, None, :], (src_ids == pad_id)[:, None, None, :]


def test_transformer_masks_accepts_right_answers(capsys):
    for candidate in (right_masks, chapter_five_masks):
        assert checks.transformer_masks(candidate), candidate.__name__
    assert "passes all 3 test cases" in capsys.readouterr().out


def test_transformer_masks_names_the_mistake(capsys):
    expectations = [
        (no_causal_masks, "no causal part"),
        (self_blind_masks, "may not see itself"),
        (flipped_masks, "True where a query MAY attend"),
        (row_padding_masks, "padding masked as queries (rows)"),
        (causal_only_masks, "the target's <pad> keys are not masked"),
        (unmasked_source, "the source's <pad> keys are not masked"),
        (three_axes, "expected 4 axes"),
        (peeking_masks, "leak test: changing the last target token"),
    ]
    for candidate, message in expectations:
        assert not checks.transformer_masks(candidate), candidate.__name__
        assert message in capsys.readouterr().out, candidate.__name__


def test_transformer_masks_is_graded_on_other_sizes():
    from attention_to_bert.checks.checker import set_hidden_seed

    previous = set_hidden_seed(7)
    try:
        sizes = []

        def recording(src_ids, tgt_in_ids, pad_id):
            sizes.append((tuple(src_ids.shape), tuple(tgt_in_ids.shape)))
            return right_masks(src_ids, tgt_in_ids, pad_id)

        assert checks.transformer_masks(recording)
    finally:
        set_hidden_seed(previous)
    assert sizes and sizes[0] != ((2, 5), (2, 4)), sizes


# --- decoder_layer (a decoder layer from section 6.3's formulas; for courses that set it) ---


class ByHand(DecoderLayer):
    def forward(self, x, memory, self_mask=None, memory_mask=None):
        attended, self_weights = self.self_attn(x, x, x, attn_mask=self_mask)
        a = self.norm1(x + attended)
        attended, cross_weights = self.multihead_attn(a, memory, memory, attn_mask=memory_mask)
        b = self.norm2(a + attended)
        return self.norm3(b + self.feed_forward(b)), self_weights, cross_weights


class NoCausal(ByHand):
    def forward(self, x, memory, self_mask=None, memory_mask=None):
        return super().forward(x, memory, None, memory_mask)


class NoMemoryMask(ByHand):
    def forward(self, x, memory, self_mask=None, memory_mask=None):
        return super().forward(x, memory, self_mask, None)


class ResidualFromX(DecoderLayer):
    def forward(self, x, memory, self_mask=None, memory_mask=None):
        attended, self_weights = self.self_attn(x, x, x, attn_mask=self_mask)
        a = self.norm1(x + attended)
        attended, cross_weights = self.multihead_attn(a, memory, memory, attn_mask=memory_mask)
        b = self.norm2(x + attended)
        return self.norm3(b + self.feed_forward(b)), self_weights, cross_weights


class NoFeedForward(ByHand):
    def feed_forward(self, x):
        return torch.zeros_like(x)


class DecoderStub(DecoderLayer):
    def forward(self, x, memory, self_mask=None, memory_mask=None): ...


def test_decoder_layer_right_answers_pass_visible_and_hidden(capsys):
    for right in (ByHand, DecoderLayer):
        assert checks.decoder_layer(right) is True
        assert "passes all 3 test cases" in capsys.readouterr().out
        with fresh_inputs(2027):
            assert checks.decoder_layer(right) is True


def test_decoder_layer_wrong_answers_are_named(capsys):
    cases = [
        (NoCausal, "ignores self_mask"),
        (NoMemoryMask, "ignores memory_mask"),
        (ResidualFromX, "adds x, not a"),
        (NoFeedForward, "no feed-forward sub-layer"),
        (DecoderStub, "expected a triple"),
        (lambda d_model, heads, d_ff: torch.nn.Linear(d_model, d_ff), "could not give candidate"),
    ]
    for wrong, message in cases:
        assert checks.decoder_layer(wrong) is False
        assert message in capsys.readouterr().out, wrong


# --- length_penalty (Exercise 6.5) ---


def right_penalty(hypotheses, alpha):
    rescored = [(ids, log_p / ((5 + len(ids)) / 6) ** alpha) for ids, log_p in hypotheses]
    return sorted(rescored, key=lambda hypothesis: -hypothesis[1])


def test_length_penalty_right_answers_pass_visible_and_hidden(capsys):
    def with_tensors(hypotheses, alpha):  # ids as tensors, scores as 0-d tensors: also fine
        return [(torch.tensor(ids), torch.tensor(s)) for ids, s in right_penalty(hypotheses, alpha)]

    for right in (right_penalty, with_tensors):
        assert checks.length_penalty(right) is True
        with fresh_inputs(2027):
            assert checks.length_penalty(right) is True


def test_length_penalty_wrong_answers_are_named(capsys):
    def by_length(hypotheses, alpha):
        return sorted(((i, s / len(i) ** alpha) for i, s in hypotheses), key=lambda h: -h[1])

    def multiplied(hypotheses, alpha):
        return [
            (i, s * ((5 + len(i)) / 6) ** (2 * alpha)) for i, s in right_penalty(hypotheses, alpha)
        ]

    def worst_first(hypotheses, alpha):
        return right_penalty(hypotheses, alpha)[::-1]

    def without_eos(hypotheses, alpha):
        return right_penalty([(i[:-1], s) for i, s in hypotheses], alpha)

    def unsorted(hypotheses, alpha):
        return [(i, s / ((5 + len(i)) / 6) ** alpha) for i, s in hypotheses]

    cases = [
        (by_length, "not by |Y| ** alpha"),
        (worst_first, "worst first"),
        (lambda hypotheses, alpha: None, "returned None"),
        (unsorted, "expected ["),
    ]
    for wrong, message in cases:
        assert checks.length_penalty(wrong) is False
        assert message in capsys.readouterr().out, wrong
    for wrong in (multiplied, without_eos):  # wrong, whatever the message
        assert checks.length_penalty(wrong) is False


# --- warmup_schedule (Exercise 6.8) ---


def _schedule(form="right"):
    def make(d_model, warmup_steps, factor=1.0):
        def rate(step):
            if form != "zero at 0":
                step = max(step, 1)
            if form == "zero at 0" and step == 0:
                return 0.0
            grow = step * warmup_steps ** (-0.5 if form == "warmup half" else -1.5)
            decay = step**-0.5
            chosen = max(grow, decay) if form == "max" else min(grow, decay)
            scale = d_model ** (0.5 if form == "d_model up" else -0.5)
            return (1.0 if form == "no factor" else factor) * scale * chosen

        return rate

    return make


def test_warmup_schedule_accepts_the_formula_and_the_package(capsys):
    from attention_to_bert.translator import noam_schedule

    assert checks.warmup_schedule(_schedule()) is True
    assert checks.warmup_schedule(noam_schedule) is True
    assert "passes all 3 test cases" in capsys.readouterr().out


def test_warmup_schedule_names_the_mistake(capsys):
    def divides_by_zero(d_model, warmup_steps, factor=1.0):
        return lambda step: factor * d_model**-0.5 * min(step**-0.5, step * warmup_steps**-1.5)

    for candidate, words in [
        (_schedule("max"), "max where the formula has min"),
        (_schedule("warmup half"), "warmup_steps ** -1.5"),
        (_schedule("d_model up"), "d_model ** -0.5"),
        (_schedule("no factor"), "multiplied by factor"),
        (_schedule("zero at 0"), "count step 0 as step 1"),
        (divides_by_zero, "rate(0) raised ZeroDivisionError"),
        (lambda d_model, warmup_steps, factor: 0.001, "expected a function rate(step)"),
        (lambda d_model, warmup_steps, factor: None, "returned None"),
    ]:
        assert checks.warmup_schedule(candidate) is False
        assert words in capsys.readouterr().out, words


def test_warmup_schedule_reports_an_unnamed_error_with_the_values(capsys):
    def doubled(d_model, warmup_steps, factor=1.0):
        right = _schedule()(d_model, warmup_steps, factor)
        return lambda step: 2 * right(step) if step > 1 else right(step)

    assert checks.warmup_schedule(doubled) is False
    assert "expected" in capsys.readouterr().out
