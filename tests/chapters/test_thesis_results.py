"""Chapter 8's thesis test (``experiments/ch08_thesis.py``): the shipped results are consistent with their
own cells, the rates respect the pre-training peak, and the statistics are right."""

import copy
import math

from helpers import load_script

from attention_to_bert import pretraining, results


def test_the_shipped_summary_is_recomputed_from_its_cells():
    shipped = results.load("ch08_thesis")
    again = load_script("experiments/ch08_thesis.py").summarise(copy.deepcopy(shipped))
    assert again["means"] == shipped["means"]
    assert again["differences"] == shipped["differences"]
    for size, count in shipped["seeds_done"].items():
        # 10 paired seeds at 4 and 16 a class; 64 a class ran on a shared CPU, as many as fitted
        assert count >= (10 if size in ("4", "16") else 1), (size, count)
        if count < shipped["seeds"]:
            assert f"{count} seeds at {size} per class" in shipped["note"], size
        for model in ("ours", "twin", "frozen", "frozen_twin"):
            cells = [c for c in shipped["cells"] if c["model"] == model and str(c["size"]) == size]
            assert len(cells) >= count and all(0 <= c["score"] <= 1 for c in cells)


def test_fine_tuning_rates_stay_at_or_below_the_pre_training_peak():
    shipped = results.load("ch08_thesis")
    _, _, info = pretraining.load_pretrained()
    assert max(shipped["lr"].values()) <= info["recipe"]["lr"]
    assert shipped["checkpoint_steps"] == info["steps_done"]


def test_the_interval_is_a_student_t_interval():
    interval = load_script("experiments/ch08_thesis.py").interval
    values = [0.1, 0.3, 0.2, 0.4, 0.0, 0.2, 0.3, 0.1, 0.2, 0.2]
    result = interval(values)
    sd = math.sqrt(sum((v - 0.2) ** 2 for v in values) / 9)
    assert abs(result["mean"] - 0.2) < 1e-9
    assert abs(result["high"] - (0.2 + 2.262 * sd / math.sqrt(10))) < 1e-4


def test_the_sentiment_table_is_recomputed_from_its_cells_and_keeps_the_recipe():
    """``ch08_sentiment.json`` (``--task sentiment``): its summary follows from its cells, every model
    has 10 paired seeds (at least 7 at 500 per class), the fine-tuned rows fit their training sentences, and each
    peak rate sits at or below its model's pre-training peak (ours: the checkpoint's; MiniLM: 1e-4).
    Where fewer than 10 seeds ran, the note says how many."""
    shipped = results.load("ch08_sentiment")
    again = load_script("experiments/ch08_thesis.py").summarise(copy.deepcopy(shipped))
    assert again["means"] == shipped["means"]
    assert again["differences"] == shipped["differences"]
    for size, count in shipped["seeds_done"].items():  # 10 paired seeds where the GPU time allowed
        assert count >= (10 if size != "500" else 7), (size, count)
        assert count == 10 or f"{count} seeds at {size} per class" in shipped["note"], size
    models = {"ours", "twin", "frozen", "frozen_twin", "minilm", "minilm_random", "frozen_minilm"}
    assert models | {"tfidf"} == set(shipped["means"])
    _, _, info = pretraining.load_pretrained()
    assert shipped["checkpoint_steps"] == info["steps_done"]
    assert max(shipped["lr"]["ours"], shipped["lr"]["twin"]) <= info["recipe"]["lr"]
    assert shipped["lr"]["minilm"] <= 1e-4
    for cell in shipped["cells"]:
        if cell["model"] in ("ours", "twin", "minilm", "minilm_random"):
            assert cell["train"] >= 0.94, cell  # fine-tuned until they fit their training set


def test_the_static_baselines_follow_from_their_predictions_and_pair_with_the_thesis_draws():
    """``ch08_static.json`` (``experiments/ch08_static.py``): each cell's score is the accuracy of its
    stored test predictions, the means follow from the cells, every (size, seed) of the thesis test
    has its static and TF-IDF cell, and the paired bootstrap's interval holds its mean."""
    import numpy as np

    shipped = results.load("ch08_static")
    thesis = results.load("ch08_thesis")
    script = load_script("experiments/ch08_static.py")
    for task in [t for t in script.SIZES if t in shipped]:
        part = shipped[task]
        sizes = script.SIZES[task]
        for kind in ("static", "tfidf"):
            for size in sizes:
                cells = [c for c in part["cells"] if (c["model"], c["size"]) == (kind, size)]
                assert sorted(c["seed"] for c in cells) == list(range(shipped["seeds"]))
                mean = np.mean([c["score"] for c in cells])
                assert abs(part["means"][kind][str(size)] - mean) < 1e-4
        for size in sizes:
            d = part["static-tfidf"][str(size)]
            assert d["low"] <= d["mean"] <= d["high"]
    assert set(shipped["thesis"]["means"]["static"]) == set(thesis["seeds_done"])


def test_the_paired_bootstrap_resamples_seeds_and_sentences():
    bootstrap = load_script("experiments/ch08_static.py").paired_bootstrap
    import numpy as np

    truth = np.array([0, 1] * 50)
    right, wrong = truth.copy(), 1 - truth
    a = {0: right, 1: right}
    b = {0: right, 1: wrong}  # one seed always wrong: a - b = 0.5 on average
    result = bootstrap(a, b, truth, draws=500)
    assert result["mean"] == 0.5 and result["low"] < 0.5 < result["high"]
    same = bootstrap(a, a, truth, draws=50)
    assert same == {"mean": 0.0, "low": 0.0, "high": 0.0}


def test_the_pooling_runs_read_the_thesis_features_on_the_thesis_draws():
    """``ch08_pooling.json`` (``experiments/ch08_pooling.py``, Lab 8.12): one cell per vector read,
    size and seed; its mean row is the thesis test's frozen row (the same frozen features, the same
    draws and penalty grid), so the [CLS] and pooled rows are compared like with like."""
    shipped = results.load("ch08_pooling")
    thesis = results.load("ch08_thesis")
    script = load_script("experiments/ch08_pooling.py")
    assert set(shipped["penalty"]) == set(script.READS)
    for read in script.READS:
        for size in shipped["sizes"]:
            cells = [c for c in shipped["cells"] if (c["read"], c["size"]) == (read, size)]
            assert sorted(c["seed"] for c in cells) == list(range(shipped["seeds"]))
            assert all(0 <= c["score"] <= 1 for c in cells)
            if read == "mean":
                mean = sum(c["score"] for c in cells) / len(cells)
                assert abs(mean - thesis["means"]["frozen"][str(size)]) < 1e-3, size
