"""Chapter 7: a small corpus for masked-LM and next-sentence pre-training."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

import torch

from attention_to_bert.data.documents import Document, document_vocabulary, make_documents
from attention_to_bert.data.vocabulary import Vocabulary, pad_sequences
from attention_to_bert.validate import check_int

BERT_PAD, BERT_UNK, BERT_CLS, BERT_SEP, BERT_MASK = "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"
BERT_SPECIALS = (BERT_PAD, BERT_UNK, BERT_CLS, BERT_SEP, BERT_MASK)
"""BERT's special tokens, in the order of their ids (``[PAD]`` is 0, as in BERT's own vocabulary)."""

# Six little worlds. A story stays in one world; its sentences are chained: the object of a sentence
# (or its subject, after an intransitive verb) is the subject of the next one.
_STORY_WORLDS = {
    "farm": dict(
        nouns=("farmer", "cow", "horse", "goat", "hen", "pig"),
        verbs=("feed", "chase", "watch", "follow", "wash"),
        intransitive=("sleep", "eat", "run", "wait"),
        adjectives=("old", "brown", "muddy", "lazy"),
        places=("barn", "field", "yard"),
    ),
    "sea": dict(
        nouns=("sailor", "seal", "crab", "whale", "gull", "captain"),
        verbs=("catch", "pull", "find", "hold", "greet"),
        intransitive=("swim", "float", "sing", "rest"),
        adjectives=("wet", "blue", "tired", "small"),
        places=("harbour", "bay", "ship"),
    ),
    "school": dict(
        nouns=("teacher", "student", "pupil", "friend", "parent", "tutor"),
        verbs=("help", "teach", "call", "meet", "praise"),
        intransitive=("read", "write", "listen", "laugh"),
        adjectives=("young", "clever", "quiet", "busy"),
        places=("classroom", "library", "hall"),
    ),
    "city": dict(
        nouns=("driver", "merchant", "tourist", "cyclist", "mayor", "guard"),
        verbs=("visit", "pass", "hire", "stop", "thank"),
        intransitive=("shop", "walk", "drive", "wander"),
        adjectives=("rich", "loud", "famous", "early"),
        places=("market", "station", "street"),
    ),
    "forest": dict(
        nouns=("hunter", "bear", "rabbit", "owl", "fox", "squirrel"),
        verbs=("track", "hear", "scare", "spot", "trap"),
        intransitive=("hide", "climb", "howl", "hunt"),
        adjectives=("wild", "grey", "silent", "hungry"),
        places=("forest", "cave", "valley"),
    ),
    "kitchen": dict(
        nouns=("chef", "waiter", "guest", "diner", "baker", "host"),
        verbs=("serve", "taste", "bring", "invite", "please"),
        intransitive=("cook", "bake", "dine", "smile"),
        adjectives=("hot", "sweet", "polite", "happy"),
        places=("kitchen", "restaurant", "cafe"),
    ),
}
STORY_WORLDS = tuple(_STORY_WORLDS)
_SINGULAR_DETERMINERS = ("the", "this", "that", "one")
_PLURAL_DETERMINERS = ("the", "these", "those", "some")


def _with_s(word: str) -> str:
    """Plural of a noun / third person singular of a verb: fox -> foxes, watch -> watches, cow -> cows."""
    return word + ("es" if word.endswith(("s", "sh", "ch", "x")) else "s")


def _noun_phrase(rng: random.Random, world: dict, noun: str, plural: bool) -> list[str]:
    determiner = rng.choice(_PLURAL_DETERMINERS if plural else _SINGULAR_DETERMINERS)
    adjective = [rng.choice(world["adjectives"])] if rng.random() < 0.3 else []
    return [determiner, *adjective, _with_s(noun) if plural else noun]


def make_stories(
    num_stories: int, seed: int = 0, min_sentences: int = 3, max_sentences: int = 6
) -> list[list[list[str]]]:
    """Generate short stories: lists of sentences, each a list of lowercase words ending with ``"."``.

    A story picks one of ``STORY_WORLDS`` and chains its sentences: "the farmer feeds some cows ."
    is followed by a sentence about the cows ("these cows sleep in the barn ."). Verbs agree in number
    with their subject (the cow sleeps, the cows sleep), so a masked verb or noun can be recovered from
    the words on *both* sides of it, and whether sentence B follows sentence A can be told from the
    world and the chain — what masked-LM and next-sentence pre-training need.
    """
    check_int("num_stories", num_stories)
    if not 2 <= min_sentences <= max_sentences:
        raise ValueError(
            f"need 2 <= min_sentences <= max_sentences, got {min_sentences} and {max_sentences}"
        )
    rng = random.Random(seed)
    stories = []
    for _ in range(num_stories):
        world = _STORY_WORLDS[rng.choice(STORY_WORLDS)]
        subject, plural = rng.choice(world["nouns"]), rng.random() < 0.5
        sentences = []
        for _ in range(rng.randint(min_sentences, max_sentences)):
            words = _noun_phrase(rng, world, subject, plural)
            if rng.random() < 0.6:  # transitive: the object becomes the next subject
                verb = rng.choice(world["verbs"])
                obj = rng.choice([noun for noun in world["nouns"] if noun != subject])
                obj_plural = rng.random() < 0.5
                words += [
                    verb if plural else _with_s(verb),
                    *_noun_phrase(rng, world, obj, obj_plural),
                ]
                subject, plural = obj, obj_plural
            else:
                verb = rng.choice(world["intransitive"])
                words += [
                    verb if plural else _with_s(verb),
                    "in",
                    "the",
                    rng.choice(world["places"]),
                ]
            sentences.append([*words, "."])
        stories.append(sentences)
    return stories


def pretraining_corpus(
    num_stories: int = 3000, num_reviews: int = 1500, seed: int = 0
) -> list[list[list[str]]]:
    """The unlabelled text BERT is pre-trained on in chapter 7: stories, then movie reviews.

    The reviews come from chapter 2's generator (``make_documents``) with a seed of their own, their
    labels thrown away and a ``"."`` closing each sentence, so the pre-trained model has read the
    kind of text it is later fine-tuned on — as real BERT read Wikipedia before its downstream tasks.
    """
    stories = make_stories(num_stories, seed=seed)
    reviews = [
        [[*sentence, "."] for sentence in document.sentences]
        for document in (make_documents(num_reviews, seed=seed + 7_000_000) if num_reviews else [])
    ]
    return stories + reviews


def pretraining_vocabulary() -> Vocabulary:
    """Every word of the stories and of chapter 2's reviews, ``"."``, and ``BERT_SPECIALS`` first."""
    words = {".", "in", *_SINGULAR_DETERMINERS, *_PLURAL_DETERMINERS}
    for world in _STORY_WORLDS.values():
        words.update(world["adjectives"], world["places"])
        for noun in world["nouns"]:
            words.update((noun, _with_s(noun)))
        for verb in (*world["verbs"], *world["intransitive"]):
            words.update((verb, _with_s(verb)))
    words.update(word for word in document_vocabulary().itos if not word.startswith("<"))
    return Vocabulary(words, specials=BERT_SPECIALS)


@dataclass(frozen=True)
class SentencePair:
    """Two sentences and the next-sentence label: 0 if ``second`` follows ``first``, 1 if it is random."""

    first: list[str]
    second: list[str]
    is_random_next: int


def make_sentence_pairs(
    documents: Sequence[Sequence[Sequence[str]]], seed: int = 0
) -> list[SentencePair]:
    """Next-sentence prediction data: every pair of consecutive sentences of each document; with
    probability 1/2 the second sentence is replaced by a sentence of another, random document."""
    if len(documents) < 2:
        raise ValueError(
            f"need at least two documents to draw random sentences from, got {len(documents)}"
        )
    rng = random.Random(seed)
    pairs = []
    for index, document in enumerate(documents):
        for first, second in zip(document[:-1], document[1:], strict=True):
            if rng.random() < 0.5:
                pairs.append(SentencePair(list(first), list(second), 0))
            else:
                other = rng.randrange(len(documents) - 1)
                other += other >= index  # any document but this one
                pairs.append(SentencePair(list(first), list(rng.choice(documents[other])), 1))
    return pairs


@dataclass
class BertBatch:
    """Token ids ``(batch, seq)`` of ``[CLS] A [SEP] (B [SEP])``, segment ids, padding mask, labels."""

    input_ids: torch.Tensor
    token_type_ids: torch.Tensor
    attention_mask: torch.Tensor
    labels: torch.Tensor

    def __len__(self) -> int:
        return self.input_ids.shape[0]

    def __getitem__(self, index) -> BertBatch:
        if isinstance(index, int):
            index = slice(index, index + 1)
        return BertBatch(
            self.input_ids[index],
            self.token_type_ids[index],
            self.attention_mask[index],
            self.labels[index],
        )


def encode_for_bert(
    firsts: Sequence[Sequence[str]],
    vocabulary: Vocabulary,
    seconds: Sequence[Sequence[str]] | None = None,
    labels: Sequence[int] | None = None,
    length: int | None = None,
) -> BertBatch:
    """Encode texts (or pairs) as BERT reads them: ``[CLS] first [SEP]`` or ``[CLS] first [SEP] second [SEP]``.

    Segment ids are 0 up to and including the first ``[SEP]``, then 1; ``attention_mask`` is 1 on real
    tokens and 0 on padding. ``labels`` (e.g. next-sentence or class labels) default to zeros.
    """
    if not firsts:
        raise ValueError("encode_for_bert needs at least one text, got none")
    if seconds is not None and len(seconds) != len(firsts):
        raise ValueError(f"got {len(firsts)} first texts but {len(seconds)} second texts")
    if labels is not None and len(labels) != len(firsts):
        raise ValueError(f"got {len(firsts)} texts but {len(labels)} labels")
    if not all(token in vocabulary for token in BERT_SPECIALS[:4]):
        raise ValueError(
            f"the vocabulary lacks BERT's special tokens {BERT_SPECIALS[:4]}: use pretraining_vocabulary()"
        )
    cls_id, sep_id = vocabulary.id(BERT_CLS), vocabulary.id(BERT_SEP)
    sequences, segments = [], []
    for row, first in enumerate(firsts):
        ids = [cls_id, *vocabulary.encode(first), sep_id]
        types = [0] * len(ids)
        if seconds is not None:
            second = [*vocabulary.encode(seconds[row]), sep_id]
            ids, types = ids + second, types + [1] * len(second)
        sequences.append(ids)
        segments.append(types)
    input_ids = pad_sequences(sequences, vocabulary.id(BERT_PAD), length)
    token_type_ids = pad_sequences(segments, 0, input_ids.shape[1])
    attention_mask = pad_sequences([[1] * len(ids) for ids in sequences], 0, input_ids.shape[1])
    label_tensor = torch.tensor(
        list(labels) if labels is not None else [0] * len(firsts), dtype=torch.long
    )
    return BertBatch(input_ids, token_type_ids, attention_mask, label_tensor)


def encode_sentence_pairs(
    pairs: Sequence[SentencePair], vocabulary: Vocabulary, length: int | None = None
) -> BertBatch:
    """``encode_for_bert`` of next-sentence pairs; ``labels`` are the next-sentence labels."""
    return encode_for_bert(
        [pair.first for pair in pairs],
        vocabulary,
        [pair.second for pair in pairs],
        [pair.is_random_next for pair in pairs],
        length,
    )


def encode_documents_for_bert(
    documents: Sequence[Document], vocabulary: Vocabulary, length: int | None = None
) -> BertBatch:
    """Chapter 2's documents as single BERT sequences ``[CLS] s1 . s2 . ... [SEP]``, labels = sentiment."""
    texts = [
        [word for sentence in document.sentences for word in (*sentence, ".")]
        for document in documents
    ]
    return encode_for_bert(
        texts, vocabulary, labels=[document.label for document in documents], length=length
    )
