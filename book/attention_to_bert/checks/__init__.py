"""The exercise checkers: ``checks.masked_softmax(my_masked_softmax)`` prints whether your function
passes or, in plain words, what is wrong, and returns ``True`` or ``False``; ``chNN`` has chapter NN's."""

from attention_to_bert.checks.ch01 import (
    additive_attention,
    masked_softmax,
    query_gradient,
    scaled_dot_score,
    top_k_attention,
    train_attention,
)
from attention_to_bert.checks.ch02 import (
    deciding_sentence_loss,
    delete_tokens,
    han_attention,
    similarity_to_row,
)
from attention_to_bert.checks.ch03 import (
    beam_search,
    forced_run,
    luong_step,
    match_by_length,
    reverse_source,
)
from attention_to_bert.checks.ch04 import (
    masked_self_attention,
    positional_encoding,
    rope_half,
    self_attention,
    window_mask,
)
from attention_to_bert.checks.ch05 import (
    cached_decoding,
    causal_mask,
    grouped_query_attention,
    head_importance,
    kv_cache_bytes,
    multi_head_attention,
    multi_head_cross_attention,
    split_heads,
)
from attention_to_bert.checks.ch06 import (
    beam_step,
    cross_attention,
    decoder_layer,
    length_penalty,
    pre_ln_encoder_layer,
    transformer_masks,
    warmup_schedule,
)
from attention_to_bert.checks.ch07 import bert_by_hand, mlm_mask, pooling, task_heads
from attention_to_bert.checks.ch08 import (
    pretraining_loss,
    sentence_vector,
    static_baseline,
    static_vectors,
)
from attention_to_bert.checks.checker import Checker
