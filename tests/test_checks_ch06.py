"""The chapter 6 checkers accept right answers and name each typical wrong one."""

import torch
import torch.nn.functional as F

from attention_to_bert import checks
from attention_to_bert.translator import noam_schedule as package_noam_schedule

# --- noam_schedule ---


def right_noam(step, d_model, warmup_steps):
    return d_model**-0.5 * min(step**-0.5, step * warmup_steps**-1.5)


def package_noam(step, d_model, warmup_steps):
    return package_noam_schedule(d_model, warmup_steps)(step)


def tensor_noam(step, d_model, warmup_steps):
    return torch.tensor(right_noam(step, d_model, warmup_steps))


def no_d_model_factor(step, d_model, warmup_steps):
    return min(step**-0.5, step * warmup_steps**-1.5)


def max_instead_of_min(step, d_model, warmup_steps):
    return d_model**-0.5 * max(step**-0.5, step * warmup_steps**-1.5)


def wrong_warmup_power(step, d_model, warmup_steps):
    return d_model**-0.5 * min(step**-0.5, step * warmup_steps**-0.5)


def doubled(step, d_model, warmup_steps):
    return 2 * right_noam(step, d_model, warmup_steps)


def returns_a_list(step, d_model, warmup_steps):
    return [right_noam(step, d_model, warmup_steps)]


def crashes_at_step_one(step, d_model, warmup_steps):
    return d_model**-0.5 * min(step**-0.5, step * warmup_steps**-1.5) / (step - 1)


def test_noam_schedule_accepts_right_answers(capsys):
    for candidate in (right_noam, package_noam, tensor_noam):
        assert checks.noam_schedule(candidate)
    assert "passes all" in capsys.readouterr().out


def test_noam_schedule_names_the_mistake(capsys):
    expectations = [
        (no_d_model_factor, "d_model^-0.5 is missing"),
        (max_instead_of_min, "largest at step"),
        (wrong_warmup_power, "largest at step"),
        (doubled, "2 times the expected one"),
        (returns_a_list, "expected a number, got list"),
        (crashes_at_step_one, "raised ZeroDivisionError"),
    ]
    for candidate, message in expectations:
        assert not checks.noam_schedule(candidate), candidate.__name__
        assert message in capsys.readouterr().out, candidate.__name__


def test_noam_schedule_catches_a_small_error_at_one_step(capsys):
    def off_after_warmup(step, d_model, warmup_steps):
        value = right_noam(step, d_model, warmup_steps)
        return value * 0.9 if step > 4 * warmup_steps else value

    assert not checks.noam_schedule(off_after_warmup)
    assert "at step 100000 expected" in capsys.readouterr().out


# --- label_smoothed_cross_entropy ---


def right_smoothing(logits, targets, smoothing, pad_id):
    log_probs = logits.log_softmax(dim=-1)
    vocab = logits.shape[-1]
    q = (1 - smoothing) * F.one_hot(targets, vocab).float() + smoothing / vocab
    keep = targets != pad_id
    return -(q * log_probs).sum(-1)[keep].mean()


def torch_smoothing(logits, targets, smoothing, pad_id):
    return F.cross_entropy(logits, targets, ignore_index=pad_id, label_smoothing=smoothing)


def counts_padding(logits, targets, smoothing, pad_id):
    vocab = logits.shape[-1]
    q = (1 - smoothing) * F.one_hot(targets, vocab).float() + smoothing / vocab
    return -(q * logits.log_softmax(-1)).sum(-1).mean()


def sums(logits, targets, smoothing, pad_id):
    vocab = logits.shape[-1]
    q = (1 - smoothing) * F.one_hot(targets, vocab).float() + smoothing / vocab
    return -(q * logits.log_softmax(-1)).sum(-1)[targets != pad_id].sum()


def no_smoothing(logits, targets, smoothing, pad_id):
    return F.cross_entropy(logits, targets, ignore_index=pad_id)


def other_classes_only(logits, targets, smoothing, pad_id):
    vocab = logits.shape[-1]
    one_hot = F.one_hot(targets, vocab).float()
    q = (1 - smoothing) * one_hot + smoothing / (vocab - 1) * (1 - one_hot)
    return -(q * logits.log_softmax(-1)).sum(-1)[targets != pad_id].mean()


def uses_logits(logits, targets, smoothing, pad_id):
    vocab = logits.shape[-1]
    q = (1 - smoothing) * F.one_hot(targets, vocab).float() + smoothing / vocab
    return -(q * logits).sum(-1)[targets != pad_id].mean()


def per_position(logits, targets, smoothing, pad_id):
    vocab = logits.shape[-1]
    q = (1 - smoothing) * F.one_hot(targets, vocab).float() + smoothing / vocab
    return -(q * logits.log_softmax(-1)).sum(-1)


def nan_from_log_of_softmax(logits, targets, smoothing, pad_id):
    return right_smoothing(logits, targets, smoothing, pad_id) * float("nan")


def test_label_smoothing_accepts_right_answers(capsys):
    assert checks.label_smoothed_cross_entropy(right_smoothing)
    assert checks.label_smoothed_cross_entropy(torch_smoothing)
    assert "passes all 4 test cases" in capsys.readouterr().out


def test_label_smoothing_names_the_mistake(capsys):
    expectations = [
        (counts_padding, "padded positions are counted"),
        (sums, "summed over the positions"),
        (no_smoothing, "no smoothing"),
        (other_classes_only, "V - 1 other classes"),
        (uses_logits, "used the logits, not log_softmax(logits)"),
        (per_position, "expected one number"),
        (nan_from_log_of_softmax, "NaN"),
    ]
    for candidate, message in expectations:
        assert not checks.label_smoothed_cross_entropy(candidate), candidate.__name__
        assert message in capsys.readouterr().out, candidate.__name__
