import os
import random

import numpy as np
import pytest
import torch
from torch import nn

from attention_to_bert import set_seed
from attention_to_bert.training import count_parameters, train


def draw_all():
    return random.random(), np.random.rand(), torch.rand(3)


def test_set_seed_makes_python_numpy_and_torch_repeat():
    set_seed(123)
    first = draw_all()
    set_seed(123)
    second = draw_all()
    assert first[0] == second[0] and first[1] == second[1]
    assert torch.equal(first[2], second[2])
    set_seed(124)
    assert not torch.equal(draw_all()[2], first[2])


def test_set_seed_fixes_the_thread_count():
    set_seed(0, num_threads=1)
    assert torch.get_num_threads() == 1
    set_seed(0)
    assert torch.get_num_threads() == min(2, os.cpu_count() or 1)


@pytest.mark.parametrize(
    "bad, error", [(-1, ValueError), (1.5, TypeError), ("0", TypeError), (True, TypeError)]
)
def test_set_seed_rejects_bad_seeds(bad, error):
    with pytest.raises(error, match="seed"):
        set_seed(bad)


def test_set_seed_rejects_zero_threads():
    with pytest.raises(ValueError, match="num_threads"):
        set_seed(0, num_threads=0)


def test_train_ends_in_eval_mode_even_when_a_step_raises():
    model = torch.nn.Linear(1, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

    def broken(model, batch):
        assert model.training  # train() trains in train mode
        raise RuntimeError("a bad batch")

    with pytest.raises(RuntimeError, match="a bad batch"):
        train(model, lambda: [None], broken, optimizer)
    assert not model.training


def test_train_fits_a_line_and_logs(capsys):
    set_seed(0)
    x = torch.linspace(-1, 1, 64).unsqueeze(1)
    y = 3 * x - 0.5
    model = nn.Linear(1, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

    def batches():
        for start in range(0, 64, 16):
            yield x[start : start + 16], y[start : start + 16]

    def loss_fn(model, batch):
        inputs, targets = batch
        return nn.functional.mse_loss(model(inputs), targets)

    losses = train(
        model, batches, loss_fn, optimizer, epochs=50, log_every=100, clip_grad_norm=None
    )
    assert len(losses) == 50 * 4
    assert losses[-1] < 1e-3 < losses[0]
    assert abs(model.weight.item() - 3) < 0.05 and abs(model.bias.item() + 0.5) < 0.05
    assert not model.training
    assert capsys.readouterr().out.count("loss") == 2  # steps 100 and 200
    assert count_parameters(model) == 2


def test_train_rejects_zero_epochs():
    model = nn.Linear(1, 1)
    with pytest.raises(ValueError, match="epochs"):
        train(
            model, lambda: [], lambda m, b: 0, torch.optim.SGD(model.parameters(), lr=0.1), epochs=0
        )


def test_train_stops_on_a_nan_loss_before_it_reaches_the_weights():
    model = nn.Linear(2, 1)
    before = model.weight.detach().clone()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    with pytest.raises(ValueError, match="loss_fn returned nan at epoch 1, step 1"):
        train(model, lambda: [torch.ones(1, 2)], lambda m, b: m(b).sum() * np.nan, optimizer)
    assert torch.equal(model.weight, before)


@pytest.mark.parametrize(
    "change, message",
    [
        ({"batches": [1]}, "batches must be a function"),
        ({"clip_grad_norm": -1.0}, "clip_grad_norm must be a finite number > 0"),
        ({"optimizer": None}, "optimizer must be a torch.optim optimizer"),
        ({"log_every": -1}, "log_every must be >= 0"),
    ],
)
def test_train_checks_its_arguments(change, message):
    model = nn.Linear(2, 1)
    arguments = dict(
        model=model,
        batches=lambda: [torch.ones(1, 2)],
        loss_fn=lambda m, b: m(b).sum(),
        optimizer=torch.optim.SGD(model.parameters(), lr=0.1),
    )
    with pytest.raises((TypeError, ValueError), match=message):
        train(**arguments | change)
