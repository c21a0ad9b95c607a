"""A bad-input audit of the helper package: call public functions as a careful user might get them
wrong, and classify what happens.

    python scripts/bad_inputs.py          # counts per category, then every case not handled well
    python scripts/bad_inputs.py -v       # every case

Categories: ``clear error`` (TypeError/ValueError naming the argument), ``raw error`` (any other
exception, or one that does not name the argument), ``silent NaN`` (NaN/inf out of finite or masked
input), ``silent accept`` (bad input, no error), ``wrong result`` (a valid input rejected or answered
wrongly), ``ok`` (a valid input answered right). Not a test: ``tests/`` pin the fixes one by one.
"""

from __future__ import annotations

import datetime
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "book"))

from attention_to_bert import attention as A  # noqa: E402
from attention_to_bert import bert, han, multihead, positional, seq2seq, training  # noqa: E402
from attention_to_bert import transformer as T  # noqa: E402
from attention_to_bert import translator as TR  # noqa: E402
from attention_to_bert.data import dates, vocabulary  # noqa: E402

CASES: list[tuple[str, str, str, Callable]] = []  # (label, kind, argument named, call)


def bad(label: str, argument: str):
    """A call that must raise TypeError/ValueError naming ``argument``."""
    return lambda call: CASES.append((label, "bad", argument, call))


def valid(label: str):
    """A valid call: it must not raise, and must return True (its own check) and no NaN."""
    return lambda call: CASES.append((label, "valid", "", call))


def finite(x: object) -> bool:
    tensors = x if isinstance(x, tuple | list) else [x]
    return all(not isinstance(t, torch.Tensor) or bool(torch.isfinite(t).all()) for t in tensors)


torch.manual_seed(0)
q, k, v = torch.randn(2, 3, 4), torch.randn(2, 5, 4), torch.randn(2, 5, 4)
pad = torch.tensor([[False] * 5, [False, False, True, True, True]])
vocab = vocabulary.Vocabulary("abc")
mha = multihead.MultiHeadAttention(8, 2)
x8 = torch.randn(2, 5, 8)
tiny = bert.BertConfig(
    vocab_size=50, hidden_size=8, num_hidden_layers=1, num_attention_heads=2, intermediate_size=16
)
bert_model = bert.BertModel(tiny).eval()
ids = torch.randint(1, 50, (2, 5))
hf_mask = torch.tensor([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]])
han_model = han.HierarchicalAttentionNetwork(10)
s2s = seq2seq.Seq2Seq(vocab, vocab, hidden_size=8, embedding_size=4)
src = torch.tensor([[4, 5, 6], [4, 5, 0]])

# --- masks and attention -------------------------------------------------------------------------
bad("padding_mask float max_length", "max_length")(lambda: A.padding_mask([2, 3], max_length=3.5))
bad("padding_mask negative", "lengths")(lambda: A.padding_mask([-1, 2]))
bad("padding_mask floats", "lengths")(lambda: A.padding_mask([1.5, 2]))
bad("padding_mask 2-D", "lengths")(lambda: A.padding_mask([[1, 2]]))
bad("padding_mask too short", "max_length")(lambda: A.padding_mask([5], max_length=3))
bad("causal_mask(0)", "size")(lambda: multihead.causal_mask(0))
bad("causal_mask(2.0)", "size")(lambda: multihead.causal_mask(2.0))
bad("padding_mask_from_ids floats", "token_ids")(
    lambda: multihead.padding_mask_from_ids(torch.ones(2, 3))
)
bad("padding_mask_from_ids pad_id str", "pad_id")(
    lambda: multihead.padding_mask_from_ids(src, pad_id="0")
)
bad("masked_softmax int mask", "mask")(
    lambda: A.masked_softmax(torch.randn(2, 3), torch.ones(2, 3))
)
bad("masked_softmax mask shape", "mask")(
    lambda: A.masked_softmax(torch.randn(2, 3), torch.ones(2, 4, dtype=torch.bool))
)
bad("masked_softmax int scores", "scores")(
    lambda: A.masked_softmax(torch.ones(2, 3, dtype=torch.long))
)
bad("masked_softmax list", "scores")(lambda: A.masked_softmax([1.0, 2.0]))
bad("attention mask on meta device", "mask")(
    lambda: A.attention(q, k, v, torch.zeros(2, 3, 5, dtype=torch.bool, device="meta"))
)
bad("scaled_dot_score d=0", "query")(
    lambda: A.scaled_dot_score(torch.randn(2, 0), torch.randn(3, 0))
)
bad("scaled_dot_score float64/float32", "key")(lambda: A.scaled_dot_score(q.double(), k))
bad("dot_score d mismatch", "key")(lambda: A.dot_score(q, torch.randn(2, 5, 3)))
bad("dot_score 1-D", "query")(lambda: A.dot_score(torch.randn(4), k))
bad("attention value length", "value")(lambda: A.attention(q, k, torch.randn(2, 4, 4)))
bad("attention score not callable", "score")(lambda: A.attention(q, k, v, score=3))
bad("GeneralScore(0, 4)", "query_size")(lambda: A.GeneralScore(0, 4))
bad("GeneralScore float64 input", "query")(lambda: A.GeneralScore(4, 4)(q.double(), k.double()))
bad("AdditiveScore float64 input", "query")(
    lambda: A.AdditiveScore(4, 4, 3)(q.double(), k.double())
)
bad("AdditiveScore hidden 2.5", "hidden_size")(lambda: A.AdditiveScore(4, 4, 2.5))


@valid("attention: NaN value at a masked key stays out")
def _():
    value = v.clone()
    value[1, 4] = float("nan")
    output, _ = A.attention(q, k, value, pad[:, None, :])
    return finite(output)


@valid("attention: fully masked row gives zeros")
def _():
    output, weights = A.attention(q, k, v, torch.ones(2, 3, 5, dtype=torch.bool))
    return bool((output == 0).all() and (weights == 0).all())


@valid("masked_softmax: large scores")
def _():
    return finite(
        A.masked_softmax(torch.tensor([[1e30, -1e30, 0.0]]), torch.tensor([[0, 0, 1]]).bool())
    )


@valid("padding_mask([]): no sequence")
def _():
    return A.padding_mask([]).shape == (0, 0) and A.padding_mask([], max_length=3).shape == (0, 3)


# --- multi-head attention --------------------------------------------------------------------------
bad("MultiHeadAttention(-4, 2)", "d_model")(lambda: multihead.MultiHeadAttention(-4, 2))
bad("MultiHeadAttention(8.0, 2)", "d_model")(lambda: multihead.MultiHeadAttention(8.0, 2))
bad("MultiHeadAttention(0, 1)", "d_model")(lambda: multihead.MultiHeadAttention(0, 1))
bad("MultiHeadAttention(8, 3)", "num_heads")(lambda: multihead.MultiHeadAttention(8, 3))
bad("MultiHeadAttention dropout 1.5", "dropout")(lambda: multihead.MultiHeadAttention(8, 2, 1.5))
bad("MHA float64 input", "query")(lambda: mha(x8.double(), x8.double(), x8.double()))
bad("MHA int input", "query")(lambda: mha(x8.long(), x8.long(), x8.long()))
bad("MHA key_padding_mask int", "key_padding_mask")(
    lambda: mha(x8, x8, x8, key_padding_mask=torch.zeros(2, 5))
)
bad("MHA key_padding_mask shape", "key_padding_mask")(
    lambda: mha(x8, x8, x8, key_padding_mask=torch.zeros(2, 4, dtype=torch.bool))
)
bad("MHA attn_mask shape", "attn_mask")(
    lambda: mha(x8, x8, x8, attn_mask=torch.zeros(4, 4, dtype=torch.bool))
)
bad("MHA mask on meta device", "key_padding_mask")(
    lambda: mha(x8, x8, x8, key_padding_mask=torch.zeros(2, 5, dtype=torch.bool, device="meta"))
)
bad("split_heads(x, 0)", "num_heads")(lambda: multihead.split_heads(x8, 0))
bad("split_heads(x, -3)", "num_heads")(lambda: multihead.split_heads(x8, -3))
bad("split_heads(None, 3)", "x")(lambda: multihead.split_heads(None, 3))
bad("split_heads(x, 3) indivisible", "num_heads")(lambda: multihead.split_heads(x8, 3))
bad("split_heads 2-D", "x")(lambda: multihead.split_heads(torch.randn(5, 8), 2))
bad("merge_heads 3-D", "x")(lambda: multihead.merge_heads(x8))


@valid("MHA: NaN value at a padded key stays out")
def _():
    value = x8.clone()
    value[1, 4] = float("nan")
    mask = torch.tensor([[False] * 5, [False] * 4 + [True]])
    output, _ = mha(x8, x8, value, key_padding_mask=mask)
    return finite(output)


@valid("MHA: fully masked query gives zeros")
def _():
    output, _ = mha(x8, x8, x8, key_padding_mask=torch.ones(2, 5, dtype=torch.bool))
    return bool((output == 0).all())


# --- positions and the Transformer -------------------------------------------------------------------
bad("PositionalEncoding dropout 1.5", "dropout")(
    lambda: positional.PositionalEncoding(8, dropout=1.5)
)
bad("PositionalEncoding d_model 0", "d_model")(lambda: positional.PositionalEncoding(0))
bad("PositionalEncoding int input", "x")(lambda: positional.PositionalEncoding(8)(x8.long()))
bad("PositionalEncoding bool input", "x")(lambda: positional.PositionalEncoding(8)(x8 > 0))
bad("PositionalEncoding too long", "x")(lambda: positional.PositionalEncoding(8, 4)(x8))
bad("Transformer(num_encoder_layers=-1)", "num_encoder_layers")(
    lambda: T.Transformer(8, 2, num_encoder_layers=-1)
)
bad("Transformer(d_ff=0)", "d_ff")(lambda: T.Transformer(8, 2, 1, 1, d_ff=0))
bad("EncoderLayer(d_ff=0)", "d_ff")(lambda: T.EncoderLayer(8, 2, 0))
bad("EncoderLayer(layer_norm_eps=-1)", "layer_norm_eps")(lambda: T.EncoderLayer(8, 2, 16, 0.0, -1))
bad("EncoderLayer(dropout=2)", "dropout")(lambda: T.EncoderLayer(8, 2, 16, 2.0))
bad("DecoderLayer(num_heads=3)", "num_heads")(lambda: T.DecoderLayer(8, 3, 16))
bad("noam_schedule factor '1'", "factor")(lambda: TR.noam_schedule(8, 10, factor="1"))
bad("noam_schedule factor 0", "factor")(lambda: TR.noam_schedule(8, 10, factor=0))
bad("noam_schedule warmup 0", "warmup_steps")(lambda: TR.noam_schedule(8, 0))
translator = TR.Seq2SeqTransformer(10, 10, d_model=8, num_heads=2, num_layers=1, d_ff=16)
bad("Seq2SeqTransformer out-of-vocabulary id", "src_ids")(
    lambda: translator(torch.tensor([[11, 4]]), torch.tensor([[2, 4]]))
)
bad("Seq2SeqTransformer float ids", "src_ids")(
    lambda: translator(torch.tensor([[1.0, 4.0]]), torch.tensor([[2, 4]]))
)
bad("Seq2SeqTransformer batch mismatch", "tgt_in_ids")(
    lambda: translator(torch.tensor([[5, 4]]), torch.tensor([[2, 4], [2, 4]]))
)
bad("Seq2SeqTransformer pad_id outside", "pad_id")(lambda: TR.Seq2SeqTransformer(3, 10, pad_id=5))
bad("Seq2SeqTransformer d_model 0", "d_model")(lambda: TR.Seq2SeqTransformer(10, 10, d_model=0))

# --- BERT ---------------------------------------------------------------------------------------------
bad("BertModel bool attention_mask (True = padding)", "attention_mask")(
    lambda: bert_model(ids, attention_mask=hf_mask == 0)
)
bad("BertModel token ids as attention_mask", "attention_mask")(
    lambda: bert_model(ids, attention_mask=ids)
)
bad("BertModel attention_mask shape", "attention_mask")(
    lambda: bert_model(ids, attention_mask=hf_mask[:, :4])
)
bad("BertModel attention_mask list", "attention_mask")(
    lambda: bert_model(ids, attention_mask=hf_mask.tolist())
)
bad("BertModel id out of vocabulary", "input_ids")(lambda: bert_model(ids + 100))
bad("BertModel float ids", "input_ids")(lambda: bert_model(ids.float()))
bad("BertModel token_type_ids 2", "token_type_ids")(lambda: bert_model(ids, ids * 0 + 2))
bad("BertConfig(vocab_size=0)", "vocab_size")(lambda: bert.BertConfig(vocab_size=0))
bad("BertConfig(num_hidden_layers=-1)", "num_hidden_layers")(
    lambda: bert.BertConfig(num_hidden_layers=-1)
)
bad("BertConfig(hidden_dropout_prob=2.0)", "hidden_dropout_prob")(
    lambda: bert.BertConfig(hidden_dropout_prob=2.0)
)
bad("BertConfig(hidden_size=768.0)", "hidden_size")(lambda: bert.BertConfig(hidden_size=768.0))
bad("BertConfig(layer_norm_eps=0)", "layer_norm_eps")(lambda: bert.BertConfig(layer_norm_eps=0))
bad("BertConfig(hidden_act='relu')", "hidden_act")(lambda: bert.BertConfig(hidden_act="relu"))


@valid("BertModel: HF 1/0 attention_mask = no mask when all ones")
def _():
    with torch.no_grad():
        a = bert_model(ids, attention_mask=torch.ones_like(ids))[0]
        b = bert_model(ids)[0]
    return torch.allclose(a, b)


@valid("BertModel: NaN-free with a fully padded row")
def _():
    with torch.no_grad():
        return finite(bert_model(ids, attention_mask=torch.zeros_like(ids))[0])


# --- HAN, seq2seq, data, training -------------------------------------------------------------------
bad("HAN out-of-vocabulary id", "word_ids")(lambda: han_model(torch.full((1, 2, 3), 12)))
bad("HAN pad_id outside the vocabulary", "pad_id")(
    lambda: han.HierarchicalAttentionNetwork(10, pad_id=10)
)
bad("HAN vocab_size 0", "vocab_size")(lambda: han.HierarchicalAttentionNetwork(0))
bad("HAN score 'cosine'", "score")(lambda: han.HierarchicalAttentionNetwork(10, score="cosine"))
bad("HAN mask int", "word_padding_mask")(
    lambda: han_model(torch.ones(1, 2, 3, dtype=torch.long), torch.zeros(1, 2, 3))
)
bad("ContextAttention float64 input", "values")(
    lambda: han.ContextAttention(4, 3)(torch.randn(2, 5, 4).double(), pad)
)
bad("Seq2Seq out-of-vocabulary id", "source")(
    lambda: s2s(torch.tensor([[40, 5]]), torch.tensor([2]), torch.tensor([[2, 4]]))
)
bad("Seq2Seq lengths shorter than the tokens", "lengths")(
    lambda: s2s(src, torch.tensor([1, 1]), torch.tensor([[2, 4], [2, 4]]))
)
bad("Seq2Seq float lengths", "lengths")(
    lambda: s2s(src, torch.tensor([3.0, 2.0]), torch.tensor([[2, 4], [2, 4]]))
)
bad("greedy_decode out-of-vocabulary id", "source")(
    lambda: seq2seq.greedy_decode(s2s, torch.tensor([[40, 5]]))
)
bad("greedy_decode max_length 0", "max_length")(lambda: seq2seq.greedy_decode(s2s, src, 0))
bad("fit(seed=None)", "seed")(lambda: seq2seq.fit(s2s, [("ab", "ba")], seed=None))
bad("fit(lr=-1)", "lr")(lambda: seq2seq.fit(s2s, [("ab", "ba")], lr=-1.0))
bad("Vocabulary.decode([-1])", "ids")(lambda: vocab.decode([-1]))
bad("Vocabulary.decode([1.7])", "ids")(lambda: vocab.decode([1.7]))
bad("Vocabulary.decode([99])", "ids")(lambda: vocab.decode([99]))
bad("pad_sequences([[1.5, 2]])", "sequences")(lambda: vocabulary.pad_sequences([[1.5, 2]]))
bad("pad_sequences(pad_id=-1)", "pad_id")(lambda: vocabulary.pad_sequences([[1, 2]], pad_id=-1))
bad("date_splits(seed=None)", "seed")(lambda: dates.date_splits(seed=None, num_train=5, num_test=5))
bad("date_splits(seed='abc')", "seed")(
    lambda: dates.date_splits(seed="abc", num_train=5, num_test=5)
)
bad("date_splits(seed=1.5)", "seed")(lambda: dates.date_splits(seed=1.5, num_train=5, num_test=5))
bad("format_date on a string", "date")(lambda: dates.format_date("2009-06-25", "25 jun 2009"))
bad("format_date unknown style", "style")(
    lambda: dates.format_date(datetime.date(2009, 6, 25), "x")
)
bad("choose_device('mps') where there is none", "prefer")(
    lambda: training.choose_device("mps") if not torch.backends.mps.is_available() else 1 / 0
)
bad("choose_device('gpu')", "prefer")(lambda: training.choose_device("gpu"))
bad("set_seed(-1)", "seed")(lambda: training.set_seed(-1))
bad("set_seed(1.5)", "seed")(lambda: training.set_seed(1.5))


@valid("HAN on 0 documents")
def _():
    return han_model(torch.ones(0, 2, 3, dtype=torch.long)).logits.shape == (0, 2)


@valid("greedy_decode on a batch of 0")
def _():
    return seq2seq.greedy_decode(s2s, torch.ones(0, 3, dtype=torch.long))[0].shape[0] == 0


@valid("greedy_decode restores train mode after an error")
def _():
    s2s.train()
    try:
        seq2seq.greedy_decode(s2s, torch.tensor([[40, 5]]))
    except Exception:
        pass
    return s2s.training


@valid("head_grid with 0 heads")
def _():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from attention_to_bert import plotting

    figure = plotting.head_grid(torch.zeros(0, 3, 3))
    plt.close(figure)
    return figure is not None


def classify(kind: str, argument: str, call: Callable) -> tuple[str, str]:
    try:
        result = call()
    except (TypeError, ValueError) as error:
        if kind == "valid":
            return "wrong result", f"rejected: {type(error).__name__}: {error}"
        named = f"{argument}" in str(error)
        return ("clear error" if named else "raw error"), f"{type(error).__name__}: {error}"
    except Exception as error:  # noqa: BLE001 (classify anything)
        if kind == "valid":
            return "wrong result", f"rejected: {type(error).__name__}: {error}"
        return "raw error", f"{type(error).__name__}: {error}"
    if kind == "valid":
        return ("ok", "") if result is True else ("wrong result", f"returned {result!r}")
    if not finite(result if isinstance(result, tuple) else getattr(result, "logits", result)):
        return "silent NaN", "NaN or inf in the result"
    return "silent accept", "no error"


def main() -> None:
    verbose = "-v" in sys.argv
    counts: Counter[str] = Counter()
    for label, kind, argument, call in CASES:
        category, detail = classify(kind, argument, call)
        counts[category] += 1
        if verbose or category not in ("clear error", "ok"):
            print(f"{category:14s} {label}: {detail[:150]}")
    print(f"{len(CASES)} cases: " + ", ".join(f"{n} {c}" for c, n in counts.most_common()))


if __name__ == "__main__":
    main()
