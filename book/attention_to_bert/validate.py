"""Argument checks at the boundary (a model's ``forward``, a config, a function a chapter calls by
name), once a call: a wrong type raises ``TypeError``, a wrong value or shape ``ValueError``, and the
message names the argument. Helpers inside a layer do not check: they carry shape comments."""

from __future__ import annotations

import torch
from torch import Tensor, nn

_NAMES = {torch.long: "torch.long", torch.bool: "torch.bool"}


def check_int(name: str, value: object, minimum: int = 1, maximum: int | None = None) -> None:
    """An ``int`` (not a bool) in ``[minimum, maximum]``."""
    check_instance(name, value, int, "an int")
    if value < minimum or (maximum is not None and value > maximum):
        bound = f">= {minimum}" if maximum is None else f"in [{minimum}, {maximum}]"
        raise ValueError(f"{name} must be {bound}, got {value}")


def check_ints(minimum: int = 1, maximum: int | None = None, **values: object) -> None:
    """``check_int`` for each keyword argument: ``check_ints(num_heads=num_heads, d_ff=d_ff)``."""
    for name, value in values.items():
        check_int(name, value, minimum, maximum)


def check_number(name: str, value: object, positive: bool = False) -> None:
    """A finite real number (not a bool), ``> 0`` if ``positive``."""
    check_instance(name, value, (int, float), "a number")
    if not abs(value) < float("inf") or (positive and value <= 0):
        raise ValueError(f"{name} must be a finite number{' > 0' if positive else ''}, got {value}")


def check_fraction(name: str, value: object, one: bool = False) -> None:
    """A number in ``[0, 1)``, such as a dropout rate, or in ``[0, 1]`` if ``one``."""
    check_number(name, value)
    if not 0 <= value <= 1 or (value == 1 and not one):
        raise ValueError(f"{name} must be in [0, 1{']' if one else ')'}, got {value}")


def check_instance(name: str, value: object, kind: type | tuple[type, ...], what: str = "") -> None:
    """An instance of ``kind`` (a class or a tuple of them; a bool is no int), ``what`` its name."""
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if not isinstance(value, kinds) or (isinstance(value, bool) and int in kinds):
        what = what or "a " + " or ".join(k.__name__ for k in kinds)
        raise TypeError(f"{name} must be {what}, got {type(value).__name__}")


def check_choice(name: str, value: object, choices: tuple) -> None:
    """One of ``choices``."""
    if value not in choices:
        raise ValueError(f"{name} must be one of {choices}, got {value!r}")


def check_divisible(name: str, value: int, by_name: str, by: int) -> None:
    """``value`` a multiple of ``by``, such as d_model of num_heads (each head gets value // by)."""
    if value % by:
        divisors = [d for d in range(1, value + 1) if value % d == 0][:8]
        raise ValueError(
            f"{name}={value} must be divisible by {by_name}={by} (each head gets {name} // "
            f"{by_name} features); try {by_name} in {divisors}"
        )


def check_same(what: str, **sizes: object) -> None:
    """Equal values, such as batch sizes: ``check_same("batch size", query=4, key=4)``."""
    if len(set(sizes.values())) > 1:
        *names, last = sizes
        got = ", ".join(f"{name} {size}" for name, size in sizes.items())
        raise ValueError(f"{', '.join(names)} and {last} must have the same {what}, got {got}")


def check_strings(name: str, value: object) -> None:
    """A list or tuple of ``str`` (one string alone is refused: it would be read as characters)."""
    wrong = [v for v in value if not isinstance(v, str)] if isinstance(value, list | tuple) else 0
    if wrong != []:
        got = f"a list holding {type(wrong[0]).__name__}" if wrong else type(value).__name__
        raise TypeError(f"{name} must be a list of strings (put one string in [...]), got {got}")


def check_tensor(
    name: str,
    value: object,
    *,
    dtype: torch.dtype | None = None,
    floating: bool | torch.dtype = False,
    dim: int | None = None,
    min_dim: int = 0,
    axes: str | None = None,
    shape: tuple[int, ...] | None = None,
) -> None:
    """A tensor with values (not on the meta device), of ``dtype`` (or floating point, or of the
    dtype ``floating``), with ``dim`` (or at least ``min_dim``) axes, or of ``shape``; ``axes`` names
    them in the message: ``"(batch, seq)"``."""
    if not isinstance(value, Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(value).__name__}")
    if dtype is not None and value.dtype != dtype:
        raise TypeError(f"{name} must be a {_NAMES.get(dtype, dtype)} tensor, got {value.dtype}")
    if floating is not False and not value.is_floating_point():
        raise TypeError(f"{name} must be a floating-point tensor, got {value.dtype}")
    if isinstance(floating, torch.dtype) and value.dtype != floating:
        raise TypeError(
            f"{name} must be a {floating} tensor, to match the weights or the other inputs, got "
            f"{value.dtype}: convert it with .to({floating})"
        )
    got, named = tuple(value.shape), f"{axes} = " if axes else ""
    if dim is not None and value.dim() != dim:
        raise ValueError(f"{name} must have shape {axes or f'of {dim} dimensions'}, got {got}")
    if value.dim() < min_dim:
        raise ValueError(f"{name} must have at least {min_dim} dimensions, got shape {got}")
    if shape is not None and got != tuple(shape):
        raise ValueError(f"{name} must have shape {named}{tuple(shape)}, got {got}")
    if value.is_meta:
        raise ValueError(f"{name} must hold values, got a tensor on the meta device")


def check_mask(
    name: str,
    mask: object,
    shape: tuple | None = None,
    meaning: str = "True = may not attend",
    hint: str = "",
    axes: str | None = None,
    device: torch.device | None = None,
) -> None:
    """A bool mask, of ``shape`` and on ``device`` if given; ``meaning`` says what True means,
    ``hint`` how to make one and ``axes`` names the axes, for the message."""
    if not isinstance(mask, Tensor) or mask.dtype != torch.bool:
        got = type(mask).__name__ if not isinstance(mask, Tensor) else mask.dtype
        got = f"dtype {got}; {hint}" if hint and isinstance(mask, Tensor) else got
        raise TypeError(f"{name} must be a bool tensor ({meaning}), got {got}")
    if device is not None and mask.device != device:
        raise ValueError(f"{name} must be on the inputs' device {device}, got {mask.device}")
    check_tensor(name, mask, shape=shape, axes=axes)


def check_token_ids(name: str, ids: object, vocab_size: int, axes: str = "(batch, seq)") -> None:
    """A ``torch.long`` tensor with the ``axes`` named, whose ids lie in ``0 .. vocab_size - 1``."""
    check_tensor(name, ids, dtype=torch.long, dim=axes.count(",") + 1, axes=axes)
    if ids.numel() and (ids.min() < 0 or ids.max() >= vocab_size):
        low, high = ids.min().item(), ids.max().item()
        raise ValueError(f"{name} must lie in [0, {vocab_size}), got values in [{low}, {high}]")


def check_device(name: str, value: Tensor, model: nn.Module) -> None:
    """``value`` on the device of ``model``'s weights, which must hold values (not on meta)."""
    weight = next(model.parameters())
    check_tensor(f"{type(model).__name__}'s weights", weight)  # not on the meta device
    if value.device != weight.device:
        raise ValueError(
            f"{name} must be on the model's device {weight.device}, got {value.device}"
        )
