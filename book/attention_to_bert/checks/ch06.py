"""The checkers of chapter 6: the warm-up schedule and label smoothing."""

from __future__ import annotations

from collections.abc import Callable

import torch

from attention_to_bert.checks.checker import Checker


def _noam_reference(step: int, d_model: int, warmup_steps: int) -> float:
    return d_model**-0.5 * min(step**-0.5, step * warmup_steps**-1.5)


def noam_schedule(candidate: Callable[[int, int, int], float]) -> bool:
    """Check ``candidate(step, d_model, warmup_steps)``: the learning rate of the paper at ``step`` (>= 1).

    ``lrate = d_model^-0.5 · min(step^-0.5, step · warmup_steps^-1.5)``.
    """
    checker = Checker("noam_schedule")
    for d_model, warmup in ((512, 4000), (64, 100)):
        steps = [1, warmup // 2, warmup - 1, warmup, warmup + 1, 4 * warmup, 25 * warmup]
        case = f"d_model={d_model}, warmup_steps={warmup}"
        values = []
        for step in steps:
            value = checker.call(candidate, step, d_model, warmup, case=f"{case}, step={step}")
            if value is None:
                break
            if isinstance(value, torch.Tensor) and value.numel() == 1:
                value = value.item()
            if not isinstance(value, int | float) or isinstance(value, bool):
                checker.expect(
                    False, f"{case}, step={step}: expected a number, got {type(value).__name__}"
                )
                break
            values.append(float(value))
        if len(values) != len(steps):
            continue
        expected = [_noam_reference(step, d_model, warmup) for step in steps]
        if all(abs(v - e) <= 1e-9 + 1e-6 * e for v, e in zip(values, expected, strict=True)):
            continue
        ratios = [v / e for v, e in zip(values, expected, strict=True)]
        peak = steps[max(range(len(values)), key=values.__getitem__)]
        if max(ratios) - min(ratios) < 1e-6 * abs(ratios[0]):
            if abs(ratios[0] - d_model**0.5) < 1e-6 * d_model**0.5:
                message = "the factor d_model^-0.5 is missing"
            else:
                message = f"every value is {ratios[0]:.4g} times the expected one: check the constant factor"
            checker.expect(False, f"{case}: {message}")
        elif peak != warmup:
            checker.expect(
                False,
                f"{case}: the rate is largest at step {peak} of {steps}; it must rise linearly until "
                "warmup_steps, peak there, then decay as step^-0.5 (use min of the two terms, not max)",
            )
        else:
            step, value, want = next(
                (s, v, e)
                for s, v, e in zip(steps, values, expected, strict=True)
                if abs(v - e) > 1e-9 + 1e-6 * e
            )
            checker.expect(False, f"{case}: at step {step} expected {want:.6g}, got {value:.6g}")
    return checker.report()


def label_smoothed_cross_entropy(
    candidate: Callable[[torch.Tensor, torch.Tensor, float, int], torch.Tensor],
) -> bool:
    """Check ``candidate(logits, targets, smoothing, pad_id)``: label-smoothed cross-entropy, as torch computes it.

    ``logits`` ``(N, V)``, ``targets`` ``(N,)``. The target distribution is ``q = (1 - ε)·one_hot + ε / V``
    (the smoothing spread over all V classes); the loss is ``-Σ_k q_k log softmax(logits)_k``, averaged over
    the positions whose target is not ``pad_id``. It must equal
    ``F.cross_entropy(logits, targets, ignore_index=pad_id, label_smoothing=ε)``.
    """
    checker = Checker("label_smoothed_cross_entropy")
    generator = torch.Generator().manual_seed(6)
    cases = [(8, 6, 0.1, 0, 2), (5, 4, 0.3, 0, 0), (7, 5, 0.0, 0, 2), (6, 9, 0.2, 3, 1)]
    for rows, vocab, smoothing, pad_id, num_pads in cases:
        logits = torch.randn(rows, vocab, generator=generator) * 2
        targets = torch.randint(0, vocab, (rows,), generator=generator)
        targets[targets == pad_id] = (pad_id + 1) % vocab
        targets[rows - num_pads :] = pad_id
        case = f"{rows} positions ({num_pads} padded), vocabulary {vocab}, smoothing={smoothing}, pad_id={pad_id}"
        expected = torch.nn.functional.cross_entropy(
            logits, targets, ignore_index=pad_id, label_smoothing=smoothing
        )
        actual = checker.call(
            candidate, logits.clone(), targets.clone(), smoothing, pad_id, case=case
        )
        if actual is None:
            continue
        if isinstance(actual, torch.Tensor) and actual.dim() > 0 and actual.numel() > 1:
            checker.expect(
                False,
                f"{case}: expected one number (a 0-d tensor), got shape {tuple(actual.shape)}; "
                "average over the non-pad positions",
            )
            continue
        if isinstance(actual, torch.Tensor) and actual.dim() > 0:
            actual = actual.reshape(())
        if (
            isinstance(actual, torch.Tensor)
            and actual.shape == expected.shape
            and not torch.isnan(actual).any()
        ):
            log_probs = logits.log_softmax(-1)
            keep = targets != pad_id
            one_hot = torch.nn.functional.one_hot(targets, vocab).float()
            per_position = -(((1 - smoothing) * one_hot + smoothing / vocab) * log_probs).sum(-1)
            other_classes = (1 - smoothing) * one_hot + smoothing / max(vocab - 1, 1) * (
                1 - one_hot
            )
            wrong_answers = [
                (
                    per_position.mean(),
                    "the padded positions are counted: leave out positions whose target is pad_id",
                ),
                (
                    per_position[keep].sum(),
                    "summed over the positions: take the mean over the non-pad ones",
                ),
                (
                    torch.nn.functional.nll_loss(log_probs[keep], targets[keep]),
                    "no smoothing: mix (1 - ε) of the one-hot target with ε spread uniformly over the vocabulary",
                ),
                (
                    -(other_classes * log_probs).sum(-1)[keep].mean(),
                    "ε is spread over the V - 1 other classes; torch spreads it over all V: q = (1-ε)·onehot + ε/V",
                ),
                (
                    -(((1 - smoothing) * one_hot + smoothing / vocab) * logits)
                    .sum(-1)[keep]
                    .mean(),
                    "used the logits instead of the log-probabilities: apply log_softmax first",
                ),
            ]
            found = False
            for wrong, message in wrong_answers:
                if not torch.allclose(wrong, expected, atol=1e-6) and torch.allclose(
                    actual.detach().float(), wrong, atol=1e-5
                ):
                    checker.expect(False, f"{case}: {message}")
                    found = True
                    break
            if found:
                continue
        checker.expect_close(actual, expected, case)
    return checker.report()
