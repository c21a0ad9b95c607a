"""BERT from scratch, named like Hugging Face's ``modeling_bert.py`` so that real weights load by name.

- ``BertConfig``: the fields of a BERT ``config.json`` (``BertConfig.from_json(path)``).
- ``BertModel``: token + segment + position embeddings, then a stack of post-LN encoder layers (GELU).
  ``forward(input_ids, token_type_ids=None, attention_mask=None)`` returns the last hidden states
  ``(batch, seq, hidden)`` and the list of per-layer attention weights ``(batch, heads, seq, seq)``.
- ``BertForPreTraining``: masked-LM head (tied to the word embeddings) + next-sentence head on the
  pooled ``[CLS]``; ``mask_tokens`` applies the 80/10/10 masking rule; ``pretraining_loss``.
- ``BertForSequenceClassification``: a classifier on the pooled ``[CLS]`` vector, for fine-tuning.
- ``load_minilm()``: our ``BertModel`` with the real all-MiniLM-L6-v2 weights and its tokenizer, offline.

Modules: ``model`` (the encoder and ``load_minilm``), ``pretraining`` (pre-training and fine-tuning).
"""

from attention_to_bert.bert.model import (
    ACTIVATIONS,
    IGNORE_INDEX,
    BertAttention,
    BertConfig,
    BertEmbeddings,
    BertEncoder,
    BertIntermediate,
    BertLayer,
    BertModel,
    BertOutput,
    BertPooler,
    BertSelfAttention,
    BertSelfOutput,
    init_weights,
    load_minilm,
    load_minilm_tokenizer,
    mean_pool,
    minilm_path,
    special_token_mask,
)
from attention_to_bert.bert.pretraining import (
    BertForPreTraining,
    BertForSequenceClassification,
    BertLMPredictionHead,
    BertPredictionHeadTransform,
    BertPreTrainingHeads,
    mask_tokens,
    pretraining_loss,
)
