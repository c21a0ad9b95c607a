"""Chapter 8's pre-training examples: ``PairSampler`` draws ``[CLS] A [SEP] B [SEP]`` pairs (and
sentences alone) from documents of token ids, for ``pretraining.pretraining_losses``."""

from __future__ import annotations

import random

import torch

from attention_to_bert.data.vocabulary import pad_sequences
from attention_to_bert.validate import check_instance, check_int, check_ints

IGNORE = -100  # the NSP label of a sentence alone (torch's cross_entropy ignore_index)


class PairSampler:
    """Draws BERT's pre-training examples ``[CLS] A [SEP] B [SEP]`` from documents (lists of
    sentences, already token ids). Half of the time A is a sentence of a document with a next one,
    and B is that next sentence (NSP label 0) or, with probability 1/2, a sentence of a random
    other document (label 1). Otherwise the example is one sentence alone, NSP label -100."""

    def __init__(
        self,
        documents: list[list[list[int]]],
        cls_id: int,
        sep_id: int,
        max_length: int = 48,
        seed: int = 0,
    ) -> None:
        what = "a list of documents, each a list of sentences (lists of token ids)"
        check_instance("documents", documents, list, what)
        if not all(isinstance(d, list) and all(isinstance(s, list) for s in d) for d in documents):
            raise TypeError(f"documents must be {what}")
        if not any(documents):
            raise ValueError("documents must hold at least one non-empty document, got none")
        check_ints(cls_id=cls_id, sep_id=sep_id)  # 0 is [PAD]
        check_ints(minimum=5, max_length=max_length)  # [CLS] A [SEP] B [SEP]
        check_int("seed", seed, minimum=0)
        if cls_id == sep_id:
            raise ValueError(f"cls_id and sep_id must differ, got {cls_id} for both")
        self.documents = [doc for doc in documents if doc]
        self.multi = [i for i, doc in enumerate(self.documents) if len(doc) > 1]
        self.cls_id, self.sep_id, self.max_length = cls_id, sep_id, max_length
        self.rng = random.Random(seed)

    def example(self) -> tuple[list[int], list[int], int]:
        """One ``(input_ids, token_type_ids, nsp_label)``."""
        rng, room = self.rng, self.max_length - 3
        if self.multi and rng.random() < 0.5:
            doc = self.documents[rng.choice(self.multi)]
            i = rng.randrange(len(doc) - 1)
            a, b, label = doc[i], doc[i + 1], 0
            if rng.random() < 0.5:
                other = rng.randrange(len(self.documents))
                if self.documents[other] is not doc:
                    b, label = rng.choice(self.documents[other]), 1
            a = a[: max(room // 2, room - len(b))]
            b = b[: room - len(a)]
            ids = [self.cls_id, *a, self.sep_id, *b, self.sep_id]
            return ids, [0] * (len(a) + 2) + [1] * (len(b) + 1), label
        doc = self.documents[rng.randrange(len(self.documents))]
        a = rng.choice(doc)[: self.max_length - 2]
        return [self.cls_id, *a, self.sep_id], [0] * (len(a) + 2), IGNORE

    def batch(self, size: int) -> dict[str, torch.Tensor]:
        """``size`` examples padded to the longest: input_ids, token_type_ids, attention_mask
        (1 = real token), special (True at [CLS]/[SEP]/padding) and nsp_labels."""
        check_int("size", size)
        examples = [self.example() for _ in range(size)]
        ids = pad_sequences([tokens for tokens, _, _ in examples])
        types = pad_sequences([segments for _, segments, _ in examples])
        attention = (ids != 0).long()
        special = (ids == 0) | (ids == self.cls_id) | (ids == self.sep_id)
        labels = torch.tensor([label for _, _, label in examples])
        return dict(
            input_ids=ids,
            token_type_ids=types,
            attention_mask=attention,
            special=special,
            nsp_labels=labels,
        )
