"""The checkers of chapter 6: the warm-up schedule and label smoothing."""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F

from attention_to_bert.checks.checker import Checker


def noam_schedule(candidate: Callable[[int, int, int], float]) -> bool:
    """Check ``candidate(step, d_model, warmup_steps) = d_model^-0.5 · min(step^-0.5, step · warmup_steps^-1.5)``."""
    checker = Checker("noam_schedule")
    for d_model, warmup in ((512, 4000), (64, 100)):
        steps = [1, warmup // 2, warmup - 1, warmup, warmup + 1, 4 * warmup, 25 * warmup]
        case = f"d_model={d_model}, warmup_steps={warmup}"
        values = []
        for step in steps:
            value = checker.call(candidate, step, d_model, warmup, case=f"{case}, step={step}")
            if isinstance(value, torch.Tensor) and value.numel() == 1:
                value = value.item()
            if not isinstance(value, int | float) or isinstance(value, bool):
                got = type(value).__name__
                checker.expect(value is None, f"{case}, step={step}: expected a number, got {got}")
                break
            values.append(float(value))
        expected = [d_model**-0.5 * min(step**-0.5, step * warmup**-1.5) for step in steps]
        ratios = [value / want for value, want in zip(values, expected, strict=False)]
        if len(values) < len(steps) or all(abs(ratio - 1) <= 1e-6 for ratio in ratios):
            continue
        peak = steps[values.index(max(values))]
        if max(ratios) - min(ratios) < 1e-6 * ratios[0]:
            message = f"every value is {ratios[0]:.4g} times the expected one"
            if abs(ratios[0] / d_model**0.5 - 1) < 1e-6:
                message = "the factor d_model^-0.5 is missing"
        elif peak != warmup:
            message = (
                f"the rate is largest at step {peak} of {steps}; it must rise linearly until "
                "warmup_steps, peak there, then decay as step^-0.5 (min of the two terms, not max)"
            )
        else:
            i = next(i for i, ratio in enumerate(ratios) if abs(ratio - 1) > 1e-6)
            message = f"at step {steps[i]} expected {expected[i]:.6g}, got {values[i]:.6g}"
        checker.expect(False, f"{case}: {message}")
    return checker.report()


def label_smoothed_cross_entropy(candidate: Callable[..., torch.Tensor]) -> bool:
    """Check ``candidate(logits, targets, smoothing, pad_id)``: the mean over non-pad positions of
    -Σ_k q_k log softmax(logits)_k, q = (1 - ε)·one_hot + ε / V, as ``F.cross_entropy`` computes it."""
    checker = Checker("label_smoothed_cross_entropy")
    generator = torch.Generator().manual_seed(6)
    cases = [(8, 6, 0.1, 0, 2), (5, 4, 0.3, 0, 0), (7, 5, 0.0, 0, 2), (6, 9, 0.2, 3, 1)]
    for rows, vocab, smoothing, pad_id, pads in cases:
        logits = torch.randn(rows, vocab, generator=generator) * 2
        targets = torch.randint(0, vocab, (rows,), generator=generator)
        targets[targets == pad_id] = (pad_id + 1) % vocab
        targets[rows - pads :] = pad_id
        case = f"{rows} positions ({pads} padded), vocabulary {vocab}, smoothing={smoothing}, pad_id={pad_id}"
        log_p, keep, one_hot = logits.log_softmax(-1), targets != pad_id, F.one_hot(targets, vocab)
        q = (1 - smoothing) * one_hot + smoothing / vocab
        q_others = (1 - smoothing) * one_hot + smoothing / (vocab - 1) * (1 - one_hot)
        losses = -(q * log_p).sum(-1)
        over_others = -(q_others * log_p).sum(-1)[keep].mean()
        mistakes = [
            (losses, "expected one number, got one loss per position: average the non-pad ones"),
            (losses.mean(), "the padded positions are counted: leave out targets equal to pad_id"),
            (losses[keep].sum(), "summed over the positions: take the mean over the non-pad ones"),
            (F.nll_loss(log_p[keep], targets[keep]), "no smoothing: q = (1 - ε)·one_hot + ε / V"),
            (over_others, "ε spread over the V - 1 other classes; torch spreads it over all V"),
            (-(q * logits).sum(-1)[keep].mean(), "used the logits, not log_softmax(logits)"),
        ]
        expected = F.cross_entropy(logits, targets, ignore_index=pad_id, label_smoothing=smoothing)
        arguments = (logits.clone(), targets.clone(), smoothing, pad_id)
        actual = checker.call(candidate, *arguments, case=case)
        checker.compare(actual, expected, case, mistakes)
    return checker.report()
