"""Generated data sets and vocabularies, all seeded; nothing is downloaded.

One module a task, in chapter order (every name is also importable from ``attention_to_bert.data``):
``vocabulary`` (shared), ``regression`` (chapter 1), ``documents`` (chapters 2 and 7), ``dates``
(chapters 3 and 6), ``partners`` (chapter 4), ``pretraining`` (chapter 7). Every generator takes a
``seed`` and returns the same data on every machine (its own ``random.Random(seed)``).
"""

from attention_to_bert.data.dates import (
    DATE_FORMATS,
    DATE_SOURCE_CHARS,
    DATE_TARGET_CHARS,
    DateSplits,
    date_splits,
    date_vocabularies,
    encode_pairs,
    format_date,
    make_dates,
    make_digit_strings,
)
from attention_to_bert.data.documents import (
    DOCUMENT_LABELS,
    MOVIE_ASPECTS,
    NEGATIONS,
    NEGATIVE_WORDS,
    OFF_TOPIC_THINGS,
    POSITIVE_WORDS,
    Document,
    DocumentBatch,
    document_splits,
    document_vocabulary,
    encode_documents,
    make_documents,
)
from attention_to_bert.data.partners import PARTNER_SYMBOLS, partner_sequences
from attention_to_bert.data.pretraining import (
    BERT_CLS,
    BERT_MASK,
    BERT_PAD,
    BERT_SEP,
    BERT_SPECIALS,
    BERT_UNK,
    STORY_WORLDS,
    BertBatch,
    SentencePair,
    encode_documents_for_bert,
    encode_for_bert,
    encode_sentence_pairs,
    make_sentence_pairs,
    make_stories,
    pretraining_corpus,
    pretraining_vocabulary,
)
from attention_to_bert.data.regression import RegressionData, regression_data, regression_function
from attention_to_bert.data.vocabulary import BOS, EOS, PAD, UNK, Vocabulary, pad_sequences
