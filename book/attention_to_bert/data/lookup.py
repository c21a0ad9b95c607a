"""Chapter 1's look-up task: why attention computes its weights from similarity (lesson section 1.4,
lab 1.1 and 1.2).

Each example holds ``n`` items, each a random key (``d`` numbers) and a label (one of ``n``
classes, as a one-hot value); the query is one item's key plus noise, and the answer is that item's
label; with a ``rotation`` R, the query is that noisy key seen through R (``R (k + noise)``), so
that the plain dot product no longer finds the item and the score's ``W`` must be learned. Where
the item sits is drawn from ``PRIOR``, which favours the first positions, so that
weights fixed per position have something to learn. Three models share the read-out
``output = sum_i a_i v_i`` (a distribution over the labels) and differ in the weights ``a``:

* ``FixedWeights``: one learned logit per position, ``a = softmax(logits)``, the same for every input;
* ``SimilarityWeights``: ``a = softmax_i(q^T W k_i)`` with a learned ``W`` (attention);
* ``SimilarityWeights(hard=True)``: the arg max of the same scores, one-hot: it picks a key, but no
  gradient reaches ``W``, the query or the keys.

Two models have no weights ``a`` at all but see the query too: ``ConcatenatedMLP``, a network with
one hidden layer that reads the query and every item (keys and labels) side by side, and
``SharedItemMLP``, one small network applied to each item with the query (the same weights for every
item) whose outputs are summed: it shares its weights across the items as attention does.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from attention_to_bert.validate import check_instance, check_int, check_number

PRIOR = (0.4, 0.2, 0.1, 0.1, 0.05, 0.05, 0.05, 0.05)  # where the wanted item sits, by position
ROTATION_SEED = 5  # the lesson's hidden rotation


def hidden_rotation(key_size: int = 8, seed: int = ROTATION_SEED) -> Tensor:
    """A random rotation ``(key_size, key_size)`` drawn with ``seed``: the Q of the QR decomposition
    of a Gaussian matrix, its columns' signs fixed so that the draw is unique."""
    check_int("key_size", key_size)
    check_int("seed", seed, minimum=0)
    generator = torch.Generator().manual_seed(seed)
    q, r = torch.linalg.qr(torch.randn(key_size, key_size, generator=generator))
    return q * torch.sign(torch.diagonal(r))


def lookup_data(
    size: int,
    seed: int,
    noise: float = 0.3,
    prior: tuple[float, ...] = PRIOR,
    key_size: int = 8,
    rotation: Tensor | None = None,
) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """``size`` examples of the look-up task, drawn with ``seed``: query ``(size, d)``, keys
    ``(size, n, d)``, one-hot values ``(size, n, n)`` and the wanted labels ``(size,)``; ``n`` is
    ``len(prior)``, ``d`` is ``key_size``. A ``rotation`` ``(d, d)`` turns each query ``x`` into
    ``rotation @ x``."""
    check_int("size", size)
    check_int("seed", seed, minimum=0)
    check_number("noise", noise)
    check_int("key_size", key_size)
    check_instance("prior", prior, tuple, "a tuple of probabilities, one a position")
    if len(prior) < 2 or min(prior) < 0 or abs(sum(prior) - 1) > 1e-6:
        raise ValueError(f"prior must be >= 2 probabilities >= 0 that sum to 1, got {prior}")
    if rotation is not None:
        check_instance("rotation", rotation, Tensor, "a (key_size, key_size) tensor")
        if tuple(rotation.shape) != (key_size, key_size):
            raise ValueError(
                f"rotation must have shape ({key_size}, {key_size}), got {tuple(rotation.shape)}"
            )
    n = len(prior)
    generator = torch.Generator().manual_seed(seed)
    keys = torch.randn(size, n, key_size, generator=generator)
    labels = torch.randint(n, (size, n), generator=generator)
    where = torch.multinomial(torch.tensor(prior).expand(size, n), 1, generator=generator)[:, 0]
    rows = torch.arange(size)
    query = keys[rows, where] + noise * torch.randn(size, key_size, generator=generator)
    if rotation is not None:
        query = query @ rotation.T
    return query, keys, F.one_hot(labels, n).float(), labels[rows, where]


class FixedWeights(nn.Module):
    """Weights learned per position, the same for every input: ``a = softmax(logits)``."""

    def __init__(self, num_positions: int = len(PRIOR)) -> None:
        super().__init__()
        check_int("num_positions", num_positions)
        self.logits = nn.Parameter(torch.zeros(num_positions))

    def forward(self, query: Tensor, keys: Tensor, values: Tensor) -> tuple[Tensor, Tensor]:
        """``(output (b, d_v), weights (b, n))``; the query and keys are not used."""
        weights = torch.softmax(self.logits, dim=-1).expand(values.shape[0], -1)
        return (weights.unsqueeze(1) @ values).squeeze(1), weights


class SimilarityWeights(nn.Module):
    """Weights from similarity: ``a = softmax_i(q^T W k_i)`` (``hard``: the one-hot arg max)."""

    def __init__(self, key_size: int = 8, hard: bool = False, seed: int = 1) -> None:
        super().__init__()
        check_int("key_size", key_size)
        check_instance("hard", hard, bool)
        check_int("seed", seed, minimum=0)
        generator = torch.Generator().manual_seed(seed)
        start = torch.randn(key_size, key_size, generator=generator) / key_size**0.5
        self.W = nn.Parameter(start)
        self.hard = hard

    def forward(self, query: Tensor, keys: Tensor, values: Tensor) -> tuple[Tensor, Tensor]:
        """``(output (b, d_v), weights (b, n))`` for a query ``(b, d)`` and keys ``(b, n, d)``."""
        scores = ((query @ self.W).unsqueeze(1) @ keys.mT).squeeze(1)  # (b, n)
        if self.hard:  # a comparison has no gradient: nothing flows back to W, q or k
            weights = (scores == scores.max(dim=-1, keepdim=True).values).float()
        else:
            weights = torch.softmax(scores, dim=-1)
        return (weights.unsqueeze(1) @ values).squeeze(1), weights


def _seeded_mlp(inputs: int, hidden: int, outputs: int, seed: int) -> tuple[nn.Linear, nn.Linear]:
    """Two linear layers with PyTorch's default start, drawn from a generator seeded with ``seed``
    (the global generator is left as it was)."""
    generator = torch.Generator().manual_seed(seed)
    with torch.random.fork_rng(devices=[]):
        first, second = nn.Linear(inputs, hidden), nn.Linear(hidden, outputs)
    with torch.no_grad():
        for layer in (first, second):
            bound = 1 / layer.in_features**0.5
            layer.weight.uniform_(-bound, bound, generator=generator)
            layer.bias.uniform_(-bound, bound, generator=generator)
    return first, second


class ConcatenatedMLP(nn.Module):
    """A query-aware model without attention: an MLP over the query, the keys and the one-hot
    labels, concatenated, with ``hidden`` ReLU units; its output is a distribution over the
    labels."""

    def __init__(
        self, num_positions: int = len(PRIOR), key_size: int = 8, hidden: int = 128, seed: int = 1
    ) -> None:
        super().__init__()
        check_int("num_positions", num_positions)
        check_int("key_size", key_size)
        check_int("hidden", hidden)
        check_int("seed", seed, minimum=0)
        inputs = key_size + num_positions * key_size + num_positions * num_positions
        self.hidden, self.out = _seeded_mlp(inputs, hidden, num_positions, seed)

    def forward(self, query: Tensor, keys: Tensor, values: Tensor) -> tuple[Tensor, None]:
        """``(output (b, n), None)``: a distribution over the labels, and no weights."""
        inputs = torch.cat([query, keys.flatten(1), values.flatten(1)], dim=-1)
        return torch.softmax(self.out(torch.relu(self.hidden(inputs))), dim=-1), None


class SharedItemMLP(nn.Module):
    """One small MLP applied to each item, ``g(q, k_i, v_i)`` (``hidden`` ReLU units, a logit per
    label), the same weights for every item; the logits are summed over the items and a softmax
    gives a distribution over the labels. No weights ``a``: it must learn the comparison itself."""

    def __init__(
        self, num_positions: int = len(PRIOR), key_size: int = 8, hidden: int = 64, seed: int = 1
    ) -> None:
        super().__init__()
        check_int("num_positions", num_positions)
        check_int("key_size", key_size)
        check_int("hidden", hidden)
        check_int("seed", seed, minimum=0)
        self.hidden, self.out = _seeded_mlp(
            2 * key_size + num_positions, hidden, num_positions, seed
        )

    def forward(self, query: Tensor, keys: Tensor, values: Tensor) -> tuple[Tensor, None]:
        """``(output (b, n), None)``: a distribution over the labels, and no weights."""
        items = torch.cat([query.unsqueeze(1).expand(-1, keys.shape[1], -1), keys, values], -1)
        logits = self.out(torch.relu(self.hidden(items))).sum(dim=1)  # (b, n): summed over items
        return torch.softmax(logits, dim=-1), None


def accuracy(model: nn.Module, data: tuple[Tensor, ...]) -> float:
    """The fraction of ``data``'s examples whose most weighted label is the wanted one."""
    query, keys, values, targets = data
    with torch.no_grad():
        output, _ = model(query, keys, values)
    return (output.argmax(dim=-1) == targets).float().mean().item()


def fit(
    model: nn.Module,
    train: tuple[Tensor, ...],
    test: tuple[Tensor, ...],
    lr: float,
    steps: int = 150,
    every: int = 10,
) -> dict[str, list[float] | float]:
    """Full-batch Adam at ``lr`` on the negative log of the wanted label's share of the output;
    returns the test accuracy every ``every`` steps (``curve``), the training accuracy at the same
    steps (``train_curve``), the final training ``loss``, ``train_accuracy`` and ``test_accuracy``."""
    check_instance("model", model, nn.Module)
    check_number("lr", lr, positive=True)
    check_int("steps", steps)
    check_int("every", every)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    query, keys, values, targets = train
    curve = [accuracy(model, test)]
    train_curve = [accuracy(model, train)]
    for step in range(1, steps + 1):
        output, _ = model(query, keys, values)
        loss = F.nll_loss(output.clamp_min(1e-6).log(), targets)
        optimizer.zero_grad()
        if loss.requires_grad:  # the hard look-up's loss has no gradient at all
            loss.backward()
        optimizer.step()
        if step % every == 0:
            curve.append(accuracy(model, test))
            train_curve.append(accuracy(model, train))
    return {
        "curve": curve,
        "train_curve": train_curve,
        "loss": loss.item(),
        "train_accuracy": accuracy(model, train),
        "test_accuracy": accuracy(model, test),
    }
