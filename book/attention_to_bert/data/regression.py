"""Chapter 1: a noisy 1-D function for attention pooling (Nadaraya–Watson)."""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

import torch


def regression_function(x: torch.Tensor) -> torch.Tensor:
    """The smooth function behind chapter 1's regression data: ``f(x) = 2 sin(x) + x^0.8``."""
    return 2 * torch.sin(x) + x.clamp_min(0) ** 0.8


@dataclass(frozen=True)
class RegressionData:
    """Noisy training pairs ``(x_train, y_train)`` and noise-free test pairs ``(x_test, y_test)``, 1-D float tensors."""

    x_train: torch.Tensor
    y_train: torch.Tensor
    x_test: torch.Tensor
    y_test: torch.Tensor


def regression_data(
    num_train: int = 50, num_test: int = 50, noise: float = 0.5, high: float = 5.0, seed: int = 0
) -> RegressionData:
    """Points of ``f(x) = 2 sin(x) + x^0.8`` on ``[0, high]`` for attention pooling (Nadaraya–Watson).

    Training inputs are ``num_train`` sorted uniform draws with Gaussian noise of standard deviation
    ``noise`` added to their targets; test inputs are ``num_test`` evenly spaced points with the
    noise-free targets. Computed in Python floats, so the data are the same on every machine.
    """
    if num_train < 1 or num_test < 2:
        raise ValueError(f"need num_train >= 1 and num_test >= 2, got {num_train} and {num_test}")
    if noise < 0 or high <= 0:
        raise ValueError(f"noise must be >= 0 and high > 0, got noise={noise} and high={high}")
    rng = random.Random(seed)
    x_train = sorted(rng.uniform(0.0, high) for _ in range(num_train))
    y_train = [2 * math.sin(x) + x**0.8 + rng.gauss(0.0, noise) for x in x_train]
    x_test = [high * index / (num_test - 1) for index in range(num_test)]
    y_test = [2 * math.sin(x) + x**0.8 for x in x_test]
    return RegressionData(
        *(
            torch.tensor(values, dtype=torch.float32)
            for values in (x_train, y_train, x_test, y_test)
        )
    )
