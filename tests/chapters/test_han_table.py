"""Chapter 2's shipped table (``results/ch02_han.json``): its form, the chosen learning rates
(by training accuracy and on the validation split), the pooling layers the script adds (HN-MAX, the
mixed models, the film-sentence ceiling), and (slow) that ``experiments/ch02_han.py`` recomputes its
seed-0 rows."""

import json
import sys

import pytest
import torch
from helpers import ROOT, load_script, seed_tolerance

from attention_to_bert.data import make_documents, sentence_splits

SHIPPED = ROOT / "book" / "attention_to_bert" / "results" / "ch02_han.json"


def script():
    return load_script("experiments/ch02_han.py")


def test_the_shipped_table_has_every_rate_and_seed_and_the_chosen_rate_fits_best():
    table = json.loads(SHIPPED.read_text())
    module = script()
    for gru in (True, False):
        rates = sorted(r["learning_rate"] for r in table["mean_lr"] if r["sentence_gru"] == gru)
        assert rates == sorted(module.LEARNING_RATES)
    rows = [r for r in table["mean_lr"] if r["sentence_gru"]]
    assert max(rows, key=lambda r: r["train"])["learning_rate"] == table["mean_lr_chosen"]
    keys = sorted(module.key(r) for r in table["seeds"])
    assert keys == sorted(
        (m, g, s)
        for m in module.MODELS
        for g in (True, False)
        for s in (0, 1, 2)
        if not (g and m in module.FLAT_ONLY)
    )
    chosen = table["validation_chosen"]
    for row in table["seeds"]:
        assert 0.5 <= row["test"] <= 1 and 0.5 <= row["crowded"] <= 1
        if row["model"] == "attention":
            expected = module.ATTENTION_LR
        elif row["model"] == "mean":
            expected = table["mean_lr_chosen"]
        else:
            validated = "attention" if row["model"] == "attention-val" else row["model"]
            expected = chosen[f"{validated} {'gru' if row['sentence_gru'] else 'flat'}"]
        assert row["learning_rate"] == expected, row
        assert row["epochs"] == module.epochs_of(row["model"]), row
        has_sentence_weights = module.MODELS[row["model"]][1] != "mean"
        if "top" in row:  # only models with sentence weights have a top sentence
            assert has_sentence_weights and row["model"] != "ceiling", row
        else:
            assert not has_sentence_weights or row["model"] == "ceiling", row
    assert table["batch_size"] == module.BATCH_SIZE


def test_the_probed_rows_hold_the_probe_and_mean_poolings_are_its_plain_mean():
    """``probe``'s columns sit in every ``attention`` and ``mean`` row (and no other); for mean
    pooling, the film sentence's weight is the mean of 1/L and swapping in a mean changes nothing."""
    table = json.loads(SHIPPED.read_text())
    module = script()
    _, test_sentences = sentence_splits(test_share=0.3, seed=0)
    documents = make_documents(test_sentences, 600, seed=2)
    one_over_length = sum(1 / len(d.sentences) for d in documents) / len(documents)
    columns = ("film_weight", "votes", "votes_own", "similarity", "uniform")
    for row in table["seeds"]:
        if row["model"] not in module.PROBED:
            assert not set(columns) & set(row), row
            continue
        assert all(0 <= row[c] <= 1 for c in columns if c != "similarity"), row
        assert -1 <= row["similarity"] <= 1, row
        if row["model"] == "mean":
            assert row["film_weight"] == pytest.approx(one_over_length, abs=1e-4), row
            assert row["uniform"] == row["test"], row


def test_the_validation_split_covers_every_model_and_rate_and_its_choice_is_the_best():
    table = json.loads(SHIPPED.read_text())
    module = script()
    found = sorted((r["model"], r["sentence_gru"], r["learning_rate"]) for r in table["validation"])
    assert found == sorted(
        (m, g, rate) for m, g in module.VALIDATED for rate in module.LEARNING_RATES
    )
    assert table["validation_chosen"] == module.chosen_rates(table)
    for row in table["validation"]:
        assert len(row["curve"]) == module.MEAN_EPOCHS
        assert row["validation"] == row["curve"][module.epochs_of(row["model"]) - 1]
        best = max(
            r["validation"]
            for r in table["validation"]
            if (r["model"], r["sentence_gru"]) == (row["model"], row["sentence_gru"])
        )
        name = f"{row['model']} {'gru' if row['sentence_gru'] else 'flat'}"
        if row["learning_rate"] == table["validation_chosen"][name]:
            assert row["validation"] == best


def test_the_validation_documents_are_made_of_training_sentences_only():
    module = script()
    data = module.Data(validation=True)
    test = module.Data()

    def sentences(documents):
        return {s for d in documents for s in d.sentences}

    validation, part = sentences(data.documents["validation"]), sentences(data.documents["train"])
    assert not validation & part  # the validation documents hold unseen sentences
    assert not (validation | part) & sentences(test.documents["test"])  # and no test sentence
    train_sentences, _ = sentence_splits(test_share=0.3, seed=0)
    allowed = {s for kind in train_sentences.values() for s, _ in kind}
    assert validation | part <= allowed
    film = data.film_batches["validation"]
    assert film["word_ids"].shape[1] == 1
    deciding = torch.tensor([d.deciding for d in data.documents["validation"]])
    rows = torch.arange(len(deciding))
    assert torch.equal(
        film["word_ids"][:, 0], data.batches["validation"]["word_ids"][rows, deciding]
    )


def test_max_pooling_takes_each_features_maximum_over_the_unpadded_states():
    pooling = script().MaxPooling()
    values = torch.tensor([[[1.0, 5.0], [3.0, 2.0], [9.0, 9.0]], [[1.0, 1.0], [2.0, 2.0], [0, 0]]])
    padding = torch.tensor([[False, False, True], [True, True, True]])
    pooled, weights = pooling(values, padding)
    assert pooled.tolist() == [[3.0, 5.0], [0.0, 0.0]]  # padding never wins; all padding: 0
    assert weights.tolist() == [[0.5, 0.5, 0.0], [0.0, 0.0, 0.0]]
    values.requires_grad_(True)
    pooling(values, padding)[0].sum().backward()
    assert torch.isfinite(values.grad).all()


def test_the_mixed_models_swap_only_the_parameter_free_layers():
    module = script()

    class Tiny:  # what make_model reads of the data
        vectors = torch.randn(7, 5)

    for name, (word, sentence) in module.MODELS.items():
        model = module.make_model(Tiny, 0, sentence_gru=False, name=name)
        for level, pooling in (("word_attention", word), ("sentence_attention", sentence)):
            layer = type(getattr(model, level)).__name__
            expected = {"attention": "ContextAttention", "mean": "MeanPooling", "max": "MaxPooling"}
            assert layer == expected[pooling], (name, level, layer)
        ids = torch.tensor([[[1, 2, 0], [3, 0, 0]]])
        output = model(ids)
        assert output.logits.shape == (1, 2)


@pytest.mark.slow
@pytest.mark.recomputes
def test_the_script_recomputes_the_shipped_seed_0_rows(tmp_path):
    out = tmp_path / "table.json"
    models = ["attention", "mean", "ceiling"]
    arguments = ["--seeds", "0", "--variants", "flat", "--no-grid", "--no-validation"]
    script().main([*arguments, "--models", *models, "--out", str(out)])
    module = sys.modules["ch02_han"]
    seeds = json.loads(SHIPPED.read_text())["seeds"]
    shipped = {module.key(r): r for r in seeds}
    rows = json.loads(out.read_text())["seeds"]
    assert len(rows) == 3
    for row in rows:
        expected = shipped[module.key(row)]
        same_model = [r for r in seeds if (r["model"], r["sentence_gru"]) == (row["model"], False)]
        assert sorted(r["seed"] for r in same_model) == [0, 1, 2]
        for name in ("train", "test", "crowded"):
            # exact on the machine that made the file; another CPU trains another model (the
            # ceiling's test accuracy: 0.88 on AVX2 against 0.8583), held to its seeds' spread
            tolerance = seed_tolerance(r[name] for r in same_model)
            assert row[name] == pytest.approx(expected[name], abs=tolerance), (name, row, expected)
