"""Data sets and vocabularies, all seeded; nothing is downloaded.

One module a task: ``vocabulary`` (shared), ``documents`` (chapter 2: real review sentences from
``sentiment``, mixed into documents), ``dates`` (chapters 3 and 6), ``reversal`` (chapter 6's
long-range task); chapter 8's pre-training examples, ``pairs``, and its corpora and splits:
``sentiment`` (the UCI sentences' pre-training and fine-tuning splits), ``wordnet`` (the first
checkpoint's corpus), ``everyday`` (the second's); ``labelled`` reads a reader's labelled CSV or TSV
file for ``attention_to_bert.finetune``.
Every generator returns the same data on every machine: it takes a ``seed`` and draws from its own
``random.Random(seed)``, or (``reversal_pairs``) takes a seeded ``torch.Generator``. The names the
chapters use are importable from ``attention_to_bert.data``.
"""

from attention_to_bert.data.dates import (
    DATE_FORMATS,
    date_splits,
    encode_pairs,
    format_date,
)
from attention_to_bert.data.documents import (
    DOCUMENT_LABELS,
    Document,
    make_documents,
    sentence_splits,
)
from attention_to_bert.data.pairs import PairSampler
from attention_to_bert.data.reversal import reversal_pairs
from attention_to_bert.data.vocabulary import BOS, EOS, Vocabulary, pad_sequences
