"""Chapter 6's shipped control runs (``results/ch06_controls.json``) come from
``experiments/ch06_controls.py``: its first steps, re-run, give the shipped losses."""

import json
import os

import pytest
from helpers import ROOT, load_script

SHIPPED = ROOT / "book" / "attention_to_bert" / "results" / "ch06_controls.json"
STEPS = 10


def script():
    return load_script("experiments/ch06_controls.py")


def test_shipped_file_holds_both_full_runs():
    table = json.loads(SHIPPED.read_text())
    assert table["seed"] == 0 and table["threads"] == 1
    for name in ("no_warmup", "no_smoothing"):
        run = table[name]
        assert len(run["losses"]) == 470  # 5 epochs of 94 batches
        assert len(run["epoch_accuracy_200"]) == 5
        assert 0 <= run["last_accuracy"] <= 1 and 0 <= run["averaged_accuracy"] <= 1
        # the full runs say how they were scored and made
        assert run["scorer"].startswith("exact_match: one teacher-forced pass")
        assert run["torch"] and run["date"]
        assert run["test_cross_entropy"] > 0
    assert 1 <= table["no_warmup"]["distinct_answers"] <= 1000


def test_scorer_recorded_is_the_scripts():
    table = json.loads(SHIPPED.read_text())
    for name in ("no_warmup", "no_smoothing"):
        assert table[name]["scorer"] == script().SCORER


@pytest.mark.slow
@pytest.mark.recomputes
def test_first_steps_agree_with_the_shipped_runs(tmp_path):
    out = tmp_path / "controls.json"
    script().main(["--steps", str(STEPS), "--out", str(out)])
    rerun, shipped = json.loads(out.read_text()), json.loads(SHIPPED.read_text())
    for name in ("no_warmup", "no_smoothing"):
        losses = rerun[name]["losses"]
        assert len(losses) == STEPS
        # the chapter's tolerance for its live 50 steps; on one machine they agree to 1e-5
        gaps = [abs(a - b) for a, b in zip(losses, shipped[name]["losses"], strict=False)]
        assert max(gaps) < 0.05, (name, gaps)


def test_unknown_run_is_a_clear_error():
    with pytest.raises(ValueError, match="no_warmup"):
        script().run("warmup", {}, steps=1)


def test_the_script_leaves_the_environment_alone():
    """It runs chapter cells in this process: an environment variable it set (MPLBACKEND did)
    would reach every notebook kernel started after it."""
    before = dict(os.environ)
    script().chapter_namespace()
    assert dict(os.environ) == before


def test_shipped_file_holds_the_pre_ln_and_exercise_runs():
    table = json.loads(SHIPPED.read_text())
    for name in script().RUNS:
        run = table[name]
        assert len(run["losses"]) == 470 and len(run["epoch_accuracy_200"]) == 5
        assert 0 <= run["averaged_accuracy"] <= 1
        assert run["scorer"] == script().SCORER


def test_pre_ln_model_is_pre_ln_and_runs_the_chapter_interface():
    import torch

    core = script().PreLNCore(16, 2, 1, 32)
    assert all(layer.norm_first for layer in core.core.encoder.layers)
    memory, weights = core.encode(torch.randn(2, 5, 16), src_key_padding_mask=None)
    out, self_weights, cross_weights = core.decode(torch.randn(2, 3, 16), memory)
    assert memory.shape == (2, 5, 16) and out.shape == (2, 3, 16)
    assert weights == self_weights == cross_weights == []


def test_shipped_file_holds_three_seeds_of_the_warmup_arms():
    """Seeds 1 and 2 of the warm-up experiment's four arms (``--seed``), beside seed 0's runs."""
    table = json.loads(SHIPPED.read_text())
    assert sorted(table["seeds"]) == ["1", "2"]
    for seed, runs in table["seeds"].items():
        assert sorted(runs) == sorted(script().SEEDED_RUNS), seed
        for run in runs.values():
            assert len(run["losses"]) == 470 and len(run["epoch_accuracy_200"]) == 5
            assert run["scorer"] == script().SCORER and run["torch"] and run["date"]
        # another seed draws other weights and batches: other losses from the first step
        assert runs["chapter"]["losses"][0] != table["no_smoothing"]["losses"][0]
    for name in ("no_warmup", "pre_ln_no_warmup"):
        assert all(1 <= table["seeds"][s][name]["distinct_answers"] <= 1000 for s in "12")


@pytest.mark.slow
@pytest.mark.recomputes
def test_first_steps_of_another_seed_agree_with_the_shipped_runs(tmp_path):
    out = tmp_path / "controls.json"
    script().main(["--seed", "1", "--runs", "chapter", "--steps", str(STEPS), "--out", str(out)])
    rerun = json.loads(out.read_text())["seeds"]["1"]["chapter"]["losses"]
    shipped = json.loads(SHIPPED.read_text())["seeds"]["1"]["chapter"]["losses"]
    assert len(rerun) == STEPS
    assert max(abs(a - b) for a, b in zip(rerun, shipped, strict=False)) < 0.05
