"""What the models return, one convention (like Hugging Face's ``ModelOutput``): a dataclass read by
attribute (``out.logits``) or key (``out["logits"]``) that also unpacks like the tuple the models
used to return (``hidden, attentions = bert(ids)``; ``out[0]``), in the order of ``_tuple``."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, ClassVar

from torch import Tensor


class ModelOutput:
    """The base of the output dataclasses: attribute, key, index and unpacking access."""

    _tuple: ClassVar[tuple[str, ...]]  # the names unpacked, in order

    def __iter__(self):
        return iter(tuple(getattr(self, name) for name in self._tuple))

    def __len__(self) -> int:
        return len(self._tuple)

    def __getitem__(self, key: int | slice | str) -> Any:
        if isinstance(key, int) and not -len(self) <= key < len(self):
            raise IndexError(f"index {key} is out of range: the output unpacks as {self._tuple}")
        if not isinstance(key, str):
            return tuple(self)[key]
        if key not in self.keys():
            raise KeyError(f"{type(self).__name__} has no {key!r}; it has {self.keys()}")
        return getattr(self, key)

    def keys(self) -> list[str]:
        """The names of the fields, and of what unpacking gives."""
        return list(dict.fromkeys([f.name for f in fields(self)] + list(self._tuple)))


@dataclass
class BertModelOutput(ModelOutput):
    """``last_hidden_state``, ``attentions`` (one ``(batch, heads, seq, seq)`` a layer, if asked) and
    ``pooler_output`` ``tanh(W h_[CLS] + b)``."""

    last_hidden_state: Tensor
    attentions: list[Tensor]
    pooler_output: Tensor
    _tuple = ("last_hidden_state", "attentions")


@dataclass
class TransformerOutput(ModelOutput):
    """``last_hidden_state`` ``(batch, tgt_len, d_model)`` and each layer's ``encoder_attentions``,
    ``decoder_attentions`` and ``cross_attentions``; it unpacks as ``(last_hidden_state,
    attentions)``, ``attentions`` a dict ``{"encoder", "decoder", "cross"}``."""

    last_hidden_state: Tensor
    encoder_attentions: list[Tensor]
    decoder_attentions: list[Tensor]
    cross_attentions: list[Tensor]
    _tuple = ("last_hidden_state", "attentions")

    @property
    def attentions(self) -> dict[str, list[Tensor]]:
        """The attention weights of every layer, by stack."""
        names = ("encoder", "decoder", "cross")
        return {name: getattr(self, f"{name}_attentions") for name in names}


@dataclass
class Seq2SeqTransformerOutput(ModelOutput):
    """A translator's: the next-token ``logits`` ``(batch, tgt_len, tgt_vocab)`` and each layer's
    attention weights, as ``TransformerOutput``'s; it unpacks as ``(logits, attentions)``."""

    logits: Tensor
    encoder_attentions: list[Tensor]
    decoder_attentions: list[Tensor]
    cross_attentions: list[Tensor]
    _tuple = ("logits", "attentions")
    attentions = TransformerOutput.attentions


@dataclass
class HANOutput(ModelOutput):
    """``logits`` ``(documents, classes)``, ``sentence_weights`` ``(documents, sentences)`` and
    ``word_weights`` ``(documents, sentences, words)``, 0 at padding."""

    logits: Tensor
    sentence_weights: Tensor
    word_weights: Tensor
    _tuple = ("logits", "sentence_weights", "word_weights")
