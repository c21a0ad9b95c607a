"""``attention_to_bert.finetune``: a reader's CSV in, a folder that transformers loads out; each bad
input refused with its row or column named, before anything is written."""

import csv
import json
import subprocess
import sys

import pytest
import torch
from helpers import ROOT, load_script

from attention_to_bert import finetune
from attention_to_bert.finetune import finetune_csv, read_labelled, stratified_split

WORDS = {
    "film": "the film movie actor plot scene director cast screen story",
    "food": "the food dish waiter menu sauce dinner pasta table soup",
    "phone": "the phone battery charger screen headset case button call",
}
FAST = dict(epochs=2, min_steps=4, learning_rates=(1e-3,), progress=False)


def sentences(per_class: int = 10) -> list[tuple[str, str]]:
    rows = []
    for label, words in WORDS.items():
        vocab = words.split()
        for i in range(per_class):
            picked = [vocab[(i * 3 + k) % len(vocab)] for k in range(5)]
            rows.append((f"I liked {' '.join(picked)} a lot, number {i}.", label))
    return rows


def write_csv(path, rows, header=("text", "label"), delimiter=","):
    with open(path, "w", newline="", encoding="utf-8") as file:
        writer = csv.writer(file, delimiter=delimiter)
        writer.writerow(header)
        writer.writerows(rows)
    return path


@pytest.fixture
def tiny_csv(tmp_path):
    return write_csv(tmp_path / "mine.csv", sentences())


def test_end_to_end_on_a_tiny_csv_the_folder_loads_in_transformers_with_the_same_predictions(
    tiny_csv, tmp_path
):
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    out = tmp_path / "model"
    result = finetune_csv(tiny_csv, out=out, **FAST)
    report = json.loads((out / "report.json").read_text())
    assert report["classes"] == ["film", "food", "phone"]
    assert report["split"] == {"train": 18, "validation": 6, "test": 6}
    assert set(report["test"]) == {"finetuned", "tfidf", "static", "majority"}
    assert report["transformers_max_difference"] < 1e-4
    with open(out / "predictions.csv", encoding="utf-8") as file:
        saved = list(csv.DictReader(file))
    assert [r["row"] for r in saved] == [str(i) for i in range(2, 32)]  # spreadsheet rows
    texts = [r["text"] for r in saved]

    model = AutoModelForSequenceClassification.from_pretrained(out).eval()
    tokenizer = AutoTokenizer.from_pretrained(out)
    batch = tokenizer(texts, padding=True, truncation=True, return_tensors="pt")
    with torch.no_grad():
        logits = model(**batch).logits
    theirs = [model.config.id2label[int(i)] for i in logits.argmax(-1)]
    assert theirs == [r["finetuned"] for r in saved] == result.predict(texts)
    # our tokenizer's pieces are what the book's model read: [CLS] text [SEP]
    ids = batch["input_ids"][0][batch["attention_mask"][0].bool()].tolist()
    assert tokenizer.convert_ids_to_tokens(ids)[:3] == ["[CLS]", "i", "liked"]
    assert tokenizer.convert_ids_to_tokens(ids)[-1] == "[SEP]"
    # the test accuracy in the report is the share of test rows predicted right
    test = [r for r in saved if r["split"] == "test"]
    right = sum(r["finetuned"] == r["label"] for r in test) / len(test)
    assert report["test"]["finetuned"] == round(right, 4)
    assert "test accuracy on 6 of 30 rows" in result.table()
    # the attention a bertviz view shows: a (1, heads, tokens, tokens) tensor per layer, rows sum to 1
    attention, tokens = result.attention("I liked the film a lot.")
    assert len(attention) == model.config.num_hidden_layers and tokens[0] == "[CLS]"
    assert attention[0].shape == (1, model.config.num_attention_heads, len(tokens), len(tokens))
    torch.testing.assert_close(attention[-1].sum(-1), torch.ones(1, 4, len(tokens)))


def test_the_split_is_stratified_and_seeded():
    labels = ["a"] * 10 + ["b"] * 5 + ["c"] * 3
    split = stratified_split(labels, seed=0)
    for name, test, validation in (("a", 2, 2), ("b", 1, 1), ("c", 1, 1)):
        mine = [s for s, label in zip(split, labels, strict=True) if label == name]
        assert (mine.count("test"), mine.count("validation")) == (test, validation)
    assert stratified_split(labels, seed=0) == split != stratified_split(labels, seed=1)


def test_it_never_writes_over_a_non_empty_folder(tiny_csv, tmp_path):
    out = tmp_path / "taken"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    with pytest.raises(FileExistsError, match="overwrite=True"):
        finetune_csv(tiny_csv, out=out, **FAST)
    assert [p.name for p in out.iterdir()] == ["notes.txt"]
    finetune_csv(tiny_csv, out=out, overwrite=True, **FAST)
    assert (out / "report.json").is_file() and not (out / "notes.txt").exists()


def test_the_command_line_writes_the_folder_and_reports_errors(tiny_csv, tmp_path):
    env = {"PYTHONPATH": str(ROOT / "book"), "TQDM_DISABLE": "1", "HF_HUB_OFFLINE": "1"}
    env |= {"OMP_NUM_THREADS": "1", "HOME": str(tmp_path)}
    command = [sys.executable, "-m", "attention_to_bert.finetune", str(tiny_csv)]
    fast = ["--epochs", "2", "--min-steps", "4", "--learning-rates", "1e-3"]
    fast += ["--out", str(tmp_path / "cli")]
    done = subprocess.run(command + fast, capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "TF-IDF + logistic regression" in done.stdout
    assert (tmp_path / "cli" / "config.json").is_file()
    wrong = subprocess.run(
        command + ["--text-column", "sentence"], capture_output=True, text=True, env=env
    )
    assert wrong.returncode == 2 and "no column 'sentence'" in wrong.stderr
    assert "'text', 'label'" in wrong.stderr


def test_the_shipped_example_is_what_its_script_builds():
    built = load_script("scripts/data/build_finetune_example.py").example_csv()
    assert finetune.example_path().read_text(encoding="utf-8") == built
    data = read_labelled(finetune.example_path(), "text", "label")
    assert len(data.texts) == 300 and data.classes == ["film", "product", "restaurant"]
    assert all(data.labels.count(name) == 100 for name in data.classes)


# ---------------------------------------------------------------------------------------------
# Bad input: each refused with its row or column named, and nothing written


def refused(path, error, match, tmp_path, **kwargs):
    out = tmp_path / "never"
    with pytest.raises(error, match=match):
        finetune_csv(path, out=out, **(FAST | kwargs))
    assert not out.exists() and not list(tmp_path.glob(".never*"))


def test_a_missing_file(tmp_path):
    refused(tmp_path / "nowhere.csv", FileNotFoundError, "no such file: .*nowhere.csv", tmp_path)


def test_a_missing_column_lists_the_columns_found(tiny_csv, tmp_path):
    refused(
        tiny_csv, ValueError, r"no column 'review'.*columns are 'text', 'label'", tmp_path,
        text_column="review",
    )  # fmt: skip
    refused(
        tiny_csv, ValueError, r"label_column: there is no column 'y'", tmp_path, label_column="y"
    )


def test_one_class_only(tmp_path):
    path = write_csv(tmp_path / "one.csv", [(f"a sentence {i}", "good") for i in range(9)])
    refused(path, ValueError, r"one class only \('good', 9 rows\)", tmp_path)


def test_a_class_with_fewer_rows_than_the_split_needs(tmp_path):
    rows = sentences(4) + [("a lone sentence", "rare"), ("another one", "rare")]
    path = write_csv(tmp_path / "rare.csv", rows)
    refused(path, ValueError, r"class 'rare' has 2 rows \(rows 14, 15\).*at least 3", tmp_path)


def test_empty_and_wordless_text_cells_name_their_rows(tmp_path):
    rows = sentences(3)
    rows[4] = ("   ", rows[4][1])
    path = write_csv(tmp_path / "empty.csv", rows)
    refused(path, ValueError, r"column 'text' is empty in row 6:", tmp_path)
    rows[4] = ("3.5", rows[4][1])
    path = write_csv(tmp_path / "numbers.csv", rows)
    refused(path, ValueError, r"column 'text' holds no words in row 6 \('3.5'\)", tmp_path)
    rows[4] = (rows[3][0], "")
    path = write_csv(tmp_path / "unlabelled.csv", rows)
    refused(path, ValueError, r"column 'label' is empty in row 6", tmp_path)


def test_a_file_that_is_not_utf8_names_its_line(tmp_path):
    path = tmp_path / "latin.csv"
    path.write_bytes("text,label\nnice,a\ncaf\u00e9 au lait,b\n".encode("latin-1"))
    refused(path, ValueError, r"not UTF-8: line 3, byte 4 is 0xe9.*CSV UTF-8", tmp_path)


def test_a_file_that_is_not_a_csv_or_tsv(tmp_path):
    workbook = tmp_path / "sheet.xlsx"
    workbook.write_bytes(b"PK\x03\x04" + bytes(100))
    refused(
        workbook,
        ValueError,
        r"not a CSV or TSV file: it looks like a ZIP.*Save it as CSV",
        tmp_path,
    )
    data = tmp_path / "rows.json"
    data.write_text('[{"text": "hi", "label": "a"}]')
    refused(data, ValueError, "looks like JSON", tmp_path)
    notes = tmp_path / "notes.md"
    notes.write_text("# my notes\n")
    refused(notes, ValueError, r"suffix '.md'.*pass a .csv file", tmp_path)
    wrong_separator = write_csv(tmp_path / "semi.csv", sentences(3), delimiter=";")
    refused(
        wrong_separator, ValueError, "header has one column only.*check the separator", tmp_path
    )
    ragged = tmp_path / "ragged.csv"
    ragged.write_text("text,label\nfine,a\nnot, quoted, b\n")
    refused(ragged, ValueError, r"row 3 has 3 fields, the header 2.*quotes", tmp_path)


def test_a_tsv_file_is_read_with_tabs(tmp_path):
    path = write_csv(tmp_path / "mine.tsv", sentences(3), delimiter="\t")
    data = read_labelled(path, "text", "label")
    assert len(data.texts) == 9 and data.texts[0].startswith("I liked")


def test_labels_that_mix_numbers_and_words(tmp_path):
    rows = sentences(3)
    rows = [(text, "1" if label == "film" else label) for text, label in rows]
    path = write_csv(tmp_path / "mixed.csv", rows)
    refused(path, ValueError, r"mixes numbers and words: row 2 has '1', row 5 has 'food'", tmp_path)


def test_number_labels_are_ordered_as_numbers(tmp_path):
    rows = [(t, {"film": "10", "food": "2", "phone": "1"}[y]) for t, y in sentences(3)]
    data = read_labelled(write_csv(tmp_path / "n.csv", rows), "text", "label")
    assert data.classes == ["1", "2", "10"]


def test_texts_longer_than_the_model_reads_are_counted_not_refused(tmp_path):
    rows = sentences(4)
    rows[0] = (" ".join(["word"] * 80), rows[0][1])
    rows[5] = (" ".join(["other"] * 70), rows[5][1])
    path = write_csv(tmp_path / "long.csv", rows)
    with pytest.warns(UserWarning, match=r"2 of 12 texts are longer than the 64 tokens.*rows 2, 7"):
        result = finetune_csv(path, **FAST)
    assert result.report["truncated"] == {"count": 2, "rows": [2, 7]}
    assert "2 texts were cut to the 64 tokens" in result.table()


def test_arguments_of_the_wrong_type(tiny_csv):
    with pytest.raises(TypeError, match="path must be a CSV or TSV file's path"):
        finetune_csv(42)
    with pytest.raises(TypeError, match="text_column must be a column name"):
        finetune_csv(tiny_csv, text_column=0)
    with pytest.raises(ValueError, match="model must be one of"):
        finetune_csv(tiny_csv, model="gpt")
    with pytest.raises(TypeError, match="overwrite must be True or False"):
        finetune_csv(tiny_csv, overwrite="yes")


@pytest.mark.slow
def test_the_shipped_example_beats_the_majority_class_and_loads_in_transformers(tmp_path):
    """The full recipe on the example file (about a minute on 2 idle cores)."""
    result = finetune_csv(finetune.example_path(), out=tmp_path / "example", progress=False)
    test = result.report["test"]
    assert result.report["split"] == {"train": 180, "validation": 60, "test": 60}
    # three balanced classes: 0.333 by chance; each model learns something
    assert min(test["finetuned"], test["tfidf"], test["static"]) > 0.45
    assert result.report["transformers_max_difference"] < 1e-4
    fig = result.figure()
    assert [axis.get_title() for axis in fig.axes[:2]] == [
        "Fine-tuned model and the two baselines",
        "Fine-tuned model: confusion matrix (test)",
    ]
