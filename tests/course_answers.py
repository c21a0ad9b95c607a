"""Answers that the course test (tests/course/test_course.py) submits for each graded exercise, by checker:
a typical wrong one (where a class found one that passed, that one: issue #49), and one built from
the package's own answer (where ``grading.SOLVED_BY`` names one). ``{f}`` stands for the name the
chapter gives the student's function; each source is a whole answer cell, the checker call
included. A new exercise adds one line to each dict; a cell with two checkers gets both answers."""

CALL = "\n\n_ = checks.{checker}({f})"

WRONG = {
    "train_attention": """def {f}(queries, keys, targets, steps, lr):  # the gradient never reset
    weight = torch.zeros(queries.shape[-1], keys.shape[-1], requires_grad=True)
    optimizer = torch.optim.Adam([weight], lr=lr)
    for _ in range(steps):
        scores = ((queries @ weight).unsqueeze(1) @ keys.mT).squeeze(1)
        torch.nn.functional.cross_entropy(scores, targets).backward()
        optimizer.step()
    return weight.detach()""",
    "top_k_attention": """def {f}(query, key, value, k, mask):  # no min(k, n_k): k > n_k raises
    scores = (query @ key.mT / query.shape[-1] ** 0.5).masked_fill(mask, -1e9)
    kth = scores.topk(k, dim=-1).values[..., -1:]
    weights = torch.softmax(scores.masked_fill(scores < kth, -1e9), dim=-1) * ~mask
    return weights @ value, weights""",
    "additive_attention": """def {f}(query, key, value, mask, w_query, w_key, w_score):  # no tanh
    pairs = (query @ w_query.T).unsqueeze(-2) + (key @ w_key.T).unsqueeze(-3)
    scores = (pairs @ w_score).masked_fill(mask, -1e9)
    weights = torch.softmax(scores, dim=-1) * ~mask
    return weights @ value, weights""",
    "query_gradient": """def {f}(query, keys, values):  # the output not subtracted
    weights = torch.softmax(keys @ query, dim=0)
    return (weights[:, None] * values).T @ keys""",
    "han_attention": """def {f}(values, padding_mask, weight, bias, context):  # no tanh
    scores = (values @ weight.T + bias) @ context
    weights = torch.softmax(scores.masked_fill(padding_mask, -1e9), dim=-1)
    return (weights.unsqueeze(-1) * values).sum(dim=1), weights""",
    "deciding_sentence_loss": """def {f}(sentence_weights, deciding):  # summed, not averaged
    picked = sentence_weights[torch.arange(len(deciding)), deciding]
    return -picked.clamp_min(1e-8).log().sum()""",
    "similarity_to_row": """def {f}(states, padding_mask, rows):  # the row's own state counted
    target = states[torch.arange(len(rows)), rows].unsqueeze(1)
    cosine = torch.nn.functional.cosine_similarity(states, target, dim=-1)
    real = (~padding_mask).float()
    return (cosine * real).sum(-1) / real.sum(-1)""",
    "delete_tokens": """def {f}(word_ids, rows, columns, pad_id):  # padded out, not deleted
    out = word_ids.clone()
    out[torch.arange(len(rows)), rows, columns] = pad_id
    return out""",
    "beam_search": """def {f}(next_log_probs, bos_id, eos_id, beam_size, max_length):
    beams = [(0.0, [])]  # finished outputs stay in the beam and may drop out of it
    for _ in range(max_length):
        candidates = []
        for score, tokens in beams:
            if tokens and tokens[-1] == eos_id:
                candidates.append((score, tokens))
                continue
            log_p = next_log_probs([bos_id, *tokens])
            candidates += [(score + v, [*tokens, t]) for t, v in enumerate(log_p.tolist())]
        candidates.sort(key=lambda candidate: candidate[0], reverse=True)
        beams = candidates[:beam_size]
        if all(tokens[-1] == eos_id for _, tokens in beams):
            break
    finished = [beam for beam in beams if beam[1][-1] == eos_id]
    score, tokens = max(finished or beams, key=lambda beam: beam[0])
    return tokens, score""",
    "luong_step": """def {f}(embedded, feed, state, encoder_outputs, mask, cell, w_score, w_c):
    scores = torch.einsum("bd,de,bje->bj", state, w_score, encoder_outputs)  # the old state
    weights = torch.softmax(scores.masked_fill(mask, float("-inf")), dim=-1)
    context = (weights[:, :, None] * encoder_outputs).sum(dim=1)
    new_state = cell(torch.cat([embedded, feed], dim=-1), state)
    attentional = torch.tanh(torch.cat([context, new_state], dim=-1) @ w_c.T)
    return attentional, new_state, weights""",
    "reverse_source": """def {f}(source, lengths):  # the padding moves to the left
    return source.flip(1)""",
    "match_by_length": """def {f}(predicted, pairs, string_lengths):  # compared with the source
    shares = []
    for n in string_lengths:
        group = [p == s for p, (s, t) in zip(predicted, pairs) if len(s) == n]
        shares.append(sum(group) / len(group))
    return shares""",
    "forced_run": """def {f}(model, source, lengths, target, mask):  # the model's own mask
    logits, alpha = model(source, lengths, target[:, :-1])
    padding = mask | (torch.arange(source.shape[1]) >= lengths[:, None])
    real = target[:, 1:] != 0
    on_padding = ((alpha * padding[:, None, :]).sum(-1) * real).sum(-1) / real.sum(-1)
    return on_padding, ((logits.argmax(-1) == target[:, 1:]) | ~real).all(-1)""",
    "self_attention": """def {f}(x, w_q, w_k, w_v):  # not scaled
    weights = torch.softmax((x @ w_q) @ (x @ w_k).mT, dim=-1)
    return weights @ (x @ w_v), weights""",
    "positional_encoding": """def {f}(max_len, d_model):  # sin and cos swapped
    position = torch.arange(max_len, dtype=torch.float32)[:, None]
    frequency = 1 / 10000 ** (torch.arange(0, d_model, 2) / d_model)
    table = torch.zeros(max_len, d_model)
    table[:, 0::2] = torch.cos(position * frequency)
    table[:, 1::2] = torch.sin(position * frequency)
    return table""",
    "split_heads": """def {f}(x, num_heads):  # a direct reshape mixes positions
    batch, seq, d_model = x.shape
    return x.reshape(batch, num_heads, seq, d_model // num_heads)""",
    "causal_mask": """def {f}(size):  # the past, not the future
    return torch.ones(size, size, dtype=torch.bool).tril(-1)""",
    "multi_head_attention": """def {f}(
    query, key, value, params, num_heads, key_padding_mask, attn_mask
):  # the masks are ignored
    batch, m, d_model = query.shape
    d_k = d_model // num_heads

    def project(x, name):
        y = x @ params[f"W_{{name}}"] + params[f"b_{{name}}"]
        return y.view(batch, x.shape[1], num_heads, d_k).transpose(1, 2)

    q, k, v = project(query, "q"), project(key, "k"), project(value, "v")
    weights = torch.softmax(q @ k.transpose(-2, -1) / d_k**0.5, dim=-1)
    heads = (weights @ v).transpose(1, 2).reshape(batch, m, d_model)
    return heads @ params["W_o"] + params["b_o"], weights""",
    "multi_head_cross_attention": """def {f}(query, memory, params, num_heads, mask):
    batch, m, d_model = query.shape  # the mask broadcast over the queries, not the heads
    d_k = d_model // num_heads

    def project(x, name):
        y = x @ params[f"W_{{name}}"] + params[f"b_{{name}}"]
        return y.view(batch, x.shape[1], num_heads, d_k).transpose(1, 2)

    q, k, v = project(query, "q"), project(memory, "k"), project(memory, "v")
    scores = q @ k.transpose(-2, -1) / d_k**0.5
    scores = scores.masked_fill(mask[:, :1, None], float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    heads = (weights @ v).transpose(1, 2).reshape(batch, m, d_model)
    return heads @ params["W_o"] + params["b_o"], weights""",
    "cross_attention": """def {f}(a, memory, memory_key_padding_mask, w_q, w_k, w_v):
    q, k, v = a @ w_q, memory @ w_k, memory @ w_v
    scores = q @ k.transpose(1, 2) / k.shape[-1] ** 0.5
    blocked = memory_key_padding_mask[:, None, :]
    weights = scores.masked_fill(blocked, float("-inf")).softmax(dim=1)  # wrong axis
    return weights @ v, weights""",
    "beam_step": """def {f}(scores, log_probs, beam_size):  # the prefix's score is not added
    vocab = log_probs.shape[-1]
    top, index = log_probs.flatten().topk(beam_size)
    return top, index // vocab, index % vocab""",
    "pre_ln_encoder_layer": """from attention_to_bert.transformer import EncoderLayer


class {f}(EncoderLayer):  # the residual adds the normalised input
    def forward(self, x, mask=None):
        x = self.norm1(x)
        attended, weights = self.self_attn(x, x, x, attn_mask=mask)
        x = self.norm2(x + attended)
        return x + self.feed_forward(x), weights""",
    "mlm_mask": """def {f}(input_ids, special_mask, mask_id, vocab_size):  # labels everywhere
    chosen = (torch.rand(input_ids.shape) < 0.15) & ~special_mask
    return input_ids.masked_fill(chosen, mask_id), input_ids.clone()""",
    "pooling": """def {f}(hidden, attention_mask, how):  # padding averaged in
    if how not in ("cls", "mean"):
        raise ValueError(f"how: expected 'cls' or 'mean', got {{how!r}}")
    return hidden[:, 0] if how == "cls" else hidden.mean(1)""",
    "bert_by_hand": """def wrong_embeddings(input_ids, token_type_ids, weights, eps):  # no LayerNorm
    e = "embeddings."
    return (
        weights[e + "word_embeddings.weight"][input_ids]
        + weights[e + "position_embeddings.weight"][: input_ids.shape[1]]
        + weights[e + "token_type_embeddings.weight"][token_type_ids]
    )


def wrong_layer(hidden, attention_mask, weights, index, heads, eps):  # its input back
    return hidden


{f} = (wrong_embeddings, wrong_layer)""",
    "task_heads": """class WrongHead(torch.nn.Module):  # one module for all three, no masking
    def __init__(self, encoder, size=2):
        super().__init__()
        self.encoder = encoder
        self.linear = torch.nn.Linear(encoder.config.hidden_size, size)

    def forward(self, input_ids, token_type_ids=None, attention_mask=None):
        hidden = self.encoder(input_ids, token_type_ids, attention_mask)[0]
        return self.linear(hidden.mean(1))


{f} = (WrongHead, WrongHead, WrongHead)""",
    "pretraining_loss": """from attention_to_bert import pretraining


def {f}(model, batch, mask_id, generator, probability, nsp):  # mask_id ignored: 4
    vocab_size = model.bert.config.vocab_size
    inputs, labels = pretraining.mask_tokens(
        batch["input_ids"], batch["special"], 4, vocab_size, generator, probability
    )
    chosen = labels != -100
    mlm, nsp_logits = model(inputs, batch["token_type_ids"], batch["attention_mask"], chosen)
    cross_entropy = torch.nn.functional.cross_entropy
    loss = cross_entropy(mlm, labels[chosen])
    return loss + cross_entropy(nsp_logits, batch["nsp_labels"]) if nsp else loss""",
    "grouped_query_attention": """def {f}(q, k, v, attn_mask=None):  # not scaled by sqrt(head_dim)
    batch, heads, m, head_dim = q.shape
    groups = k.shape[1]
    q = q.reshape(batch, groups, heads // groups, m, head_dim)
    k, v = k[:, :, None], v[:, :, None]
    scores = q @ k.transpose(-2, -1)
    if attn_mask is not None:
        scores = scores.masked_fill(attn_mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return (weights @ v).flatten(1, 2), weights.flatten(1, 2)""",
    "head_importance": """def {f}(attention, x, loss_fn):  # the signed gradient, no abs
    from attention_to_bert.multihead import merge_heads, split_heads

    heads = attention.num_heads
    q, k, v = (split_heads(p(x), heads) for p in (attention.q_proj, attention.k_proj, attention.v_proj))
    weights = torch.softmax(q @ k.mT / attention.head_dim**0.5, dim=-1)
    gates = torch.ones(heads, requires_grad=True)
    output = attention.out_proj(merge_heads((weights @ v) * gates[:, None, None]))
    return torch.autograd.grad(loss_fn(output), gates)[0]""",
    "cached_decoding": """def {f}(layers, x):  # no cache: one causal pass per layer
    h = x
    for layer in layers:
        h = h + layer(h, h, h, attn_mask=torch.ones(x.shape[1], x.shape[1]).triu(1).bool())[0]
    return h""",
    "masked_self_attention": """import math

import torch.nn.functional as F
from torch import nn


class {f}(nn.Module):  # layers with a bias (the exercise asks bias=False)
    def __init__(self, d_model, d_k, dropout=0.0):
        super().__init__()
        self.w_q = nn.Linear(d_model, d_k)
        self.w_k = nn.Linear(d_model, d_k)
        self.w_v = nn.Linear(d_model, d_k)
        self.dropout = dropout

    def forward(self, x, lengths):
        query, key, value = self.w_q(x), self.w_k(x), self.w_v(x)
        scores = query @ key.mT / math.sqrt(query.shape[-1])
        padded = torch.arange(x.shape[1])[None, :] >= lengths[:, None]
        scores = scores.masked_fill(padded[:, None, :], float("-inf"))
        weights = F.dropout(torch.softmax(scores, dim=-1), self.dropout, training=self.training)
        return weights @ value, weights""",
    "kv_cache_bytes": """def {f}(num_layers, num_kv_heads, head_dim, num_tokens, bytes_per_number):
    visible = {{  # a lookup table of the four visible cases
        (6, 8, 64, 1, 4): 24576,
        (6, 2, 64, 4096, 4): 25165824,
        (32, 8, 128, 8192, 2): 1073741824,
        (1, 1, 1, 1, 1): 2,
    }}
    return visible.get((num_layers, num_kv_heads, head_dim, num_tokens, bytes_per_number), 0)""",
    "rope_half": """def {f}(x, positions):  # the chapter's interleaved pairs, not j and j + d/2
    d = x.shape[-1]
    angle = positions[:, None] * 10000 ** (-torch.arange(0, d, 2) / d)
    even, odd = x[..., 0::2], x[..., 1::2]
    turned = torch.empty_like(x)
    turned[..., 0::2] = even * angle.cos() - odd * angle.sin()
    turned[..., 1::2] = even * angle.sin() + odd * angle.cos()
    return turned""",
    "window_mask": """def {f}(n, width):  # >=: a key exactly `width` away is cut too
    offsets = torch.arange(n)[None, :] - torch.arange(n)[:, None]
    return offsets.abs() >= width""",
    "static_vectors": """def {f}(embeddings, input_ids, attention_mask, special_ids):
    keep = attention_mask.unsqueeze(-1).float()  # [CLS] and [SEP] kept in the mean
    return (embeddings(input_ids) * keep).sum(1) / keep.sum(1)""",
    "static_baseline": """from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import StandardScaler


def {f}(vectors, labels, split, grid):  # C chosen on the test rows
    train, test = split == "train", split == "test"
    x = StandardScaler().fit(vectors[train]).transform(vectors)
    models = {{c: LogisticRegression(C=c, max_iter=2000) for c in grid}}
    for model in models.values():
        model.fit(x[train], labels[train])
    best = max(grid, key=lambda c: models[c].score(x[test], labels[test]))
    return best, models[best].score(x[test], labels[test])""",
    "sentence_vector": """def {f}(hidden, attention_mask, dense, how):  # pooled without the tanh
    if how not in ("cls", "pooled"):
        raise ValueError(f"how: expected 'cls' or 'pooled', got {{how!r}}")
    return hidden[:, 0] if how == "cls" else dense(hidden[:, 0])""",
    "decoder_layer": """from attention_to_bert.transformer import DecoderLayer


class {f}(DecoderLayer):  # the cross-attention's residual adds x, not a
    def forward(self, x, memory, self_mask=None, memory_mask=None):
        attended, self_weights = self.self_attn(x, x, x, attn_mask=self_mask)
        a = self.norm1(x + attended)
        attended, cross_weights = self.multihead_attn(a, memory, memory, attn_mask=memory_mask)
        b = self.norm2(x + attended)
        return self.norm3(b + self.feed_forward(b)), self_weights, cross_weights""",
    "length_penalty": """def {f}(hypotheses, alpha):  # divided by |Y| ** alpha
    rescored = [(ids, log_p / len(ids) ** alpha) for ids, log_p in hypotheses]
    return sorted(rescored, key=lambda hypothesis: -hypothesis[1])""",
    "transformer_masks": """def {f}(src_ids, tgt_in_ids, pad_id):  # no causal part
    decoder = (tgt_in_ids == pad_id)[:, None, None, :]
    return decoder, (src_ids == pad_id)[:, None, None, :]""",
    "warmup_schedule": """def {f}(d_model, warmup_steps, factor=1.0):  # max, not min
    def rate(step):
        step = max(step, 1)
        grow, decay = step * warmup_steps**-1.5, step**-0.5
        return factor * d_model**-0.5 * max(grow, decay)

    return rate""",
}

PACKAGE = {
    "top_k_attention": """from attention_to_bert import attention as book


def {f}(query, key, value, k, mask):
    scores = query @ key.mT / query.shape[-1] ** 0.5
    free = scores.masked_fill(mask, float("-inf"))
    kth = free.topk(min(k, free.shape[-1]), dim=-1).values[..., -1:]
    return book.attention(query, key, value, mask | (free < kth))""",
    "additive_attention": """from attention_to_bert.attention import AdditiveScore
from attention_to_bert.attention import attention as book_attention


def {f}(query, key, value, mask, w_query, w_key, w_score):
    score = AdditiveScore(query.shape[-1], key.shape[-1], w_score.shape[0])
    with torch.no_grad():
        score.query_projection.weight.copy_(w_query)
        score.key_projection.weight.copy_(w_key)
        score.v.weight.copy_(w_score[None])
    return book_attention(query, key, value, mask, score=score)""",
    "han_attention": """from attention_to_bert.han import ContextAttention


def {f}(values, padding_mask, weight, bias, context):
    layer = ContextAttention(weight.shape[1], weight.shape[0])
    with torch.no_grad():
        layer.key_projection.weight.copy_(weight)
        layer.key_projection.bias.copy_(bias)
        layer.context.copy_(context)
    return layer(values, padding_mask)""",
    "self_attention": """from attention_to_bert.attention import attention as book_attention


def {f}(x, w_q, w_k, w_v):
    return book_attention(x @ w_q, x @ w_k, x @ w_v)""",
    "positional_encoding": """from attention_to_bert.positional import PositionalEncoding


def {f}(max_len, d_model):
    return PositionalEncoding(d_model, max_len).pe""",
    "split_heads": """from attention_to_bert import multihead


def {f}(x, num_heads):
    return multihead.split_heads(x, num_heads)""",
    "causal_mask": """from attention_to_bert.masks import causal_mask as book_mask


def {f}(size):
    return book_mask(size)""",
    "multi_head_attention": """from attention_to_bert.multihead import MultiHeadAttention


def {f}(query, key, value, params, num_heads, key_padding_mask, attn_mask):
    layer = MultiHeadAttention(query.shape[-1], num_heads)
    return layer(query, key, value, key_padding_mask, attn_mask)""",
    "multi_head_cross_attention": """from attention_to_bert.multihead import MultiHeadAttention


def {f}(query, memory, params, num_heads, mask):
    layer = MultiHeadAttention(query.shape[-1], num_heads)
    with torch.no_grad():
        for name, linear in zip("qkvo", (layer.q_proj, layer.k_proj, layer.v_proj, layer.out_proj)):
            linear.weight.copy_(params[f"W_{{name}}"].T)
            linear.bias.copy_(params[f"b_{{name}}"])
    return layer(query, memory, memory, attn_mask=mask)""",
    "cross_attention": """from attention_to_bert.attention import attention as book_attention


def {f}(a, memory, memory_key_padding_mask, w_q, w_k, w_v):
    mask = memory_key_padding_mask[:, None, :]
    return book_attention(a @ w_q, memory @ w_k, memory @ w_v, mask)""",
    "beam_step": """from attention_to_bert.translator import beam_step as book_beam_step


def {f}(scores, log_probs, beam_size):
    return book_beam_step(scores, log_probs, beam_size)""",
    "luong_step": """from attention_to_bert.attention import attention as book_attention


def {f}(embedded, feed, state, encoder_outputs, mask, cell, w_score, w_c):
    new_state = cell(torch.cat([embedded, feed], dim=-1), state)
    context, weights = book_attention(
        new_state[:, None], encoder_outputs @ w_score.T, encoder_outputs, mask[:, None],
        score=lambda q, k: q @ k.mT,
    )
    joined = torch.cat([context[:, 0], new_state], dim=-1)
    return torch.tanh(joined @ w_c.T), new_state, weights[:, 0]""",
    "beam_search": """from attention_to_bert.translator import beam_step


def {f}(next_log_probs, bos_id, eos_id, beam_size, max_length):
    beams, scores, finished = [[]], torch.zeros(1, dtype=torch.float64), []
    for _ in range(max_length):
        log_probs = torch.stack([next_log_probs([bos_id, *b]) for b in beams])
        top, beam_ids, token_ids = beam_step(scores, log_probs.double(), beam_size)
        kept, kept_scores = [], []
        for score, b, t in zip(top.tolist(), beam_ids.tolist(), token_ids.tolist()):
            if score == float("-inf"):
                continue
            if t == eos_id:
                finished.append((score, [*beams[b], t]))
            else:
                kept.append([*beams[b], t])
                kept_scores.append(score)
        if not kept:
            break
        beams, scores = kept, torch.tensor(kept_scores, dtype=torch.float64)
    unfinished = list(zip(scores.tolist(), beams))
    score, tokens = max(finished or unfinished, key=lambda output: output[0])
    return tokens, score""",
    "pooling": """from attention_to_bert.classifier import mean_pool


def {f}(hidden, attention_mask, how):
    if how not in ("cls", "mean"):
        raise ValueError(f"how: expected 'cls' or 'mean', got {{how!r}}")
    return hidden[:, 0] if how == "cls" else mean_pool(hidden, attention_mask)""",
    "mlm_mask": """from attention_to_bert.pretraining import mask_tokens


def {f}(input_ids, special_mask, mask_id, vocab_size):
    generator = torch.default_generator
    return mask_tokens(input_ids, special_mask, mask_id, vocab_size, generator)""",
    "pretraining_loss": """from attention_to_bert import pretraining


def {f}(model, batch, mask_id, generator, probability, nsp):
    masking = pretraining.mask_tokens  # the package's loss masks 15%: hand it the rate
    pretraining.mask_tokens = lambda *args: masking(*args, probability=probability)
    try:
        mlm_loss, nsp_loss, _, _ = pretraining.pretraining_losses(
            model, batch, mask_id, generator
        )
    finally:
        pretraining.mask_tokens = masking
    return mlm_loss + nsp_loss if nsp else mlm_loss""",
    "grouped_query_attention": """from attention_to_bert.attention import attention as book_attention


def {f}(q, k, v, attn_mask=None):
    repeat = q.shape[1] // k.shape[1]
    k, v = k.repeat_interleave(repeat, dim=1), v.repeat_interleave(repeat, dim=1)
    return book_attention(q, k, v, mask=attn_mask)""",
    "masked_self_attention": """from torch import nn

from attention_to_bert.attention import attention as book_attention


class {f}(nn.Module):
    def __init__(self, d_model, d_k, dropout=0.0):
        super().__init__()
        self.w_q = nn.Linear(d_model, d_k, bias=False)
        self.w_k = nn.Linear(d_model, d_k, bias=False)
        self.w_v = nn.Linear(d_model, d_k, bias=False)
        self.dropout = dropout

    def forward(self, x, lengths):
        positions = torch.arange(x.shape[1], device=x.device)
        padded = (positions >= lengths[:, None])[:, None, :]
        value = self.w_v(x)
        _, weights = book_attention(self.w_q(x), self.w_k(x), value, mask=padded)
        weights = nn.functional.dropout(weights, self.dropout, training=self.training)
        return weights @ value, weights""",
    "static_baseline": """from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import StandardScaler

from attention_to_bert import classifier


def {f}(vectors, labels, split, grid):
    train, valid, test = (split == part for part in ("train", "validation", "test"))
    x = StandardScaler().fit(vectors[train]).transform(vectors)

    def make(c):
        return LogisticRegression(C=c, max_iter=2000)

    c, _, model = classifier._choose_c(
        make, grid, x[train], labels[train], x[valid], labels[valid]
    )
    return c, model.score(x[test], labels[test])""",
    "static_vectors": """import types

from attention_to_bert import classifier


def {f}(embeddings, input_ids, attention_mask, special_ids):
    table = types.SimpleNamespace(word_embeddings=embeddings)
    encoder = types.SimpleNamespace(embeddings=table)
    encoded = dict(input_ids=input_ids, attention_mask=attention_mask)
    with torch.no_grad():
        vectors = classifier._static_vectors(encoder, encoded, special_ids)
    return torch.from_numpy(vectors)""",
    "transformer_masks": """from attention_to_bert.masks import combine_masks


def {f}(src_ids, tgt_in_ids, pad_id):
    batch, n = tgt_in_ids.shape
    causal = torch.ones(n, n, dtype=torch.bool).triu(diagonal=1)
    padding = tgt_in_ids == pad_id
    decoder = combine_masks(batch, n, n, key_padding_mask=padding, attn_mask=causal)
    return decoder, (src_ids == pad_id)[:, None, None, :]""",
    "warmup_schedule": """from attention_to_bert.translator import noam_schedule


def {f}(d_model, warmup_steps, factor=1.0):
    return noam_schedule(d_model, warmup_steps, factor)""",
}


def answer(kind: dict, checker: str, name: str) -> str | None:
    """The whole answer cell of ``kind`` (WRONG or PACKAGE) for ``checks.checker``, or None."""
    if checker not in kind:
        return None
    return kind[checker].format(f=name) + CALL.format(checker=checker, f=name)
