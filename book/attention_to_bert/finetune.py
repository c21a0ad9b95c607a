"""Your own sentences: fine-tune the book's BERT (or MiniLM) on a labelled CSV or TSV file.

    python -m attention_to_bert.finetune my.csv --text-column text --label-column label
    result = finetune_csv("my.csv", text_column="text", label_column="label")

The rows are split into training, validation and test sets (seeded, stratified: each class in the
same shares). The model is fine-tuned with chapter 8's recipe (section 8.6: AdamW, weight decay 0.01,
batch 16, dropout 0.1, linear warm-up over the first 10% of the steps then linear decay, at least 10
epochs and 100 steps), once for each peak rate of a small grid, and the run that scores best on the
validation set is kept. Its classifier is Hugging Face's ``BertForSequenceClassification``: the
pooled [CLS] (dense + tanh), dropout, a linear layer, so that the saved folder loads in
``transformers``. On the test set it is compared with chapter 8's two baselines, each with its
``C`` chosen on the validation set: TF-IDF (words and word pairs) with logistic regression, and the
model's static vectors (the mean of its input token embeddings, before fine-tuning) with logistic
regression. ``FineTuneResult`` holds the table, the figure, the attention views and the predictions;
with ``out`` the folder gets the weights and tokenizer (Hugging Face's layout), ``predictions.csv``,
``report.json`` and ``report.png``. The shipped example is ``example_path()``.
"""

import argparse
import csv
import json
import os
import shutil
import tempfile
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from attention_to_bert.classifier import (
    SequenceClassifier,
    _baselines,
    _encode,
    _fine_tune,
    _fine_tune_steps,
    _load_encoder,
    _predict_ids,
    _static_vectors,
)
from attention_to_bert.data.labelled import (
    SPLIT_NAMES,
    LabelledRows,
    _check_classes,
    _rows_named,
    example_path,
    read_labelled,
    stratified_split,
)
from attention_to_bert.validate import check_choice, check_instance, check_int, check_strings

__all__ = ["FineTuneResult", "LabelledRows", "SequenceClassifier", "example_path", "finetune_csv"]
__all__ += ["read_labelled", "stratified_split", "to_transformers"]

MODELS = ("book", "minilm")
# peak learning rates tried, chosen on validation (chapter 8.7's grids)
LEARNING_RATES = {"book": (1e-4, 3e-4, 1e-3), "minilm": (1e-5, 3e-5, 1e-4)}
READS = {"book": 64, "minilm": 128}  # tokens read by default, [CLS] and [SEP] included

MODEL_NAMES = {"book": "the book's BERT", "minilm": "MiniLM"}
NAMES = {
    "finetuned": "{model}, fine-tuned",
    "tfidf": "TF-IDF + logistic regression",
    "static": "static vectors + logistic regr.",
}


@dataclass
class FineTuneResult:
    """What ``finetune_csv`` found: ``report`` (also ``report.json``), ``predictions`` (a dict per
    row, also ``predictions.csv``), the fine-tuned ``classifier`` and its ``tokenizer``."""

    report: dict
    predictions: list[dict]
    classifier: SequenceClassifier
    tokenizer: Any
    out: Path | None = None
    _max_length: int = field(default=64, repr=False)

    def table(self) -> str:
        """The test accuracy of the fine-tuned model and the two baselines, and what was chosen."""
        report, test = self.report, self.report["test"]
        lines = [
            f"test accuracy on {report['split']['test']} of {report['rows']} rows "
            f"({len(report['classes'])} classes, seed {report['seed']})",
            f"{'model':34}{'accuracy':>9}  chosen on validation",
        ]
        chosen = {
            "finetuned": f"peak rate {report['finetuned']['lr']:g}",
            "tfidf": f"C {report['tfidf']['C']:g}",
            "static": f"C {report['static']['C']:g}",
        }
        for key, name in NAMES.items():
            label = name.format(model=MODEL_NAMES[report["model"]])
            lines.append(f"{label:34}{test[key]:9.3f}  {chosen[key]}")
        lines.append(f"{'majority class':34}{test['majority']:9.3f}")
        if report["truncated"]["count"]:
            lines.append(
                f"{report['truncated']['count']} texts were cut to the "
                f"{report['max_length']} tokens the model reads"
            )
        return "\n".join(lines)

    def figure(self):
        """Test accuracy of the three models (bars) and the fine-tuned model's confusion matrix."""
        import matplotlib.pyplot as plt

        report = self.report
        classes = report["classes"]
        fig, (bars, grid) = plt.subplots(
            1, 2, figsize=(10, 4), gridspec_kw={"width_ratios": [1, 1.1]}
        )
        names = [NAMES[k].format(model=MODEL_NAMES[report["model"]]) for k in NAMES]
        values = [report["test"][k] for k in NAMES]
        bars.barh(names[::-1], values[::-1], color=["#999999", "#bbbbbb", "#4477aa"])
        bars.axvline(report["test"]["majority"], color="black", linestyle="--", linewidth=1)
        bars.text(report["test"]["majority"], 2.45, " majority class", fontsize=8, va="bottom")
        for y, value in enumerate(values[::-1]):
            bars.text(value, y, f" {value:.2f}", va="center", fontsize=9)
        bars.set_xlim(0, 1.12)
        bars.set_ylim(-0.5, 2.8)
        bars.set_xlabel(f"test accuracy ({report['split']['test']} rows)")
        bars.set_title("Fine-tuned model and the two baselines")
        matrix = np.array(report["finetuned"]["confusion"])
        image = grid.imshow(matrix, cmap="Blues")
        for (i, j), count in np.ndenumerate(matrix):
            light = count > matrix.max() / 2
            grid.text(j, i, str(count), ha="center", va="center", color="white" if light else "k")
        grid.set_xticks(range(len(classes)), classes, rotation=45, ha="right")
        grid.set_yticks(range(len(classes)), classes)
        grid.set_xlabel("predicted label")
        grid.set_ylabel("true label")
        grid.set_title("Fine-tuned model: confusion matrix (test)")
        fig.colorbar(image, ax=grid, label="test rows")
        fig.tight_layout()
        return fig

    def predict(self, texts: list[str]) -> list[str]:
        """The fine-tuned model's label for each text."""
        check_strings("texts", texts)
        logits = _predict_ids(self.classifier, _encode(self.tokenizer, texts, self._max_length))
        return [self.report["classes"][i] for i in logits.argmax(1)]

    def attention(self, text: str) -> tuple[list[torch.Tensor], list[str]]:
        """The fine-tuned model's attention for ``text``: a ``(1, heads, seq, seq)`` tensor per
        layer, and the tokens."""
        check_instance("text", text, str)
        encoded = _encode(self.tokenizer, [text], self._max_length)
        with torch.no_grad():
            out = self.classifier.bert.eval()(
                encoded["input_ids"], None, encoded["attention_mask"], output_attentions=True
            )
        tokens = self.tokenizer.convert_ids_to_tokens(encoded["input_ids"][0])
        return list(out.attentions), tokens

    def show_attention(self, texts: list[str], layers: list[int] | None = None) -> None:
        """A bertviz head view (offline) of the fine-tuned model's attention for each text."""
        from attention_to_bert.figures import bertviz_offline

        check_strings("texts", texts)
        for text in texts:
            attention, tokens = self.attention(text)
            bertviz_offline.head_view(attention, tokens, include_layers=layers)


# ---------------------------------------------------------------------------------------------
# The whole run


def _check_out(out: Path | None, overwrite: bool) -> Path | None:
    if out is None:
        return None
    check_instance("out", out, (str, os.PathLike), "a folder's path (str or Path) or None")
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise ValueError(f"out: {out} is a file, not a folder: pass a folder's path")
    if out.is_dir() and any(out.iterdir()) and not overwrite:
        raise FileExistsError(
            f"out: {out} is not empty; pass overwrite=True (--overwrite) to replace it, "
            "or another folder"
        )
    return out


def finetune_csv(
    path: str | os.PathLike,
    text_column: str = "text",
    label_column: str = "label",
    model: str = "book",
    out: str | os.PathLike | None = None,
    overwrite: bool = False,
    seed: int = 0,
    learning_rates: tuple[float, ...] | None = None,
    epochs: int = 10,
    min_steps: int = 100,
    max_length: int | None = None,
    progress: bool = True,
) -> FineTuneResult:
    """Fine-tune ``model`` (``"book"``: the book's everyday BERT; ``"minilm"``: all-MiniLM-L6-v2)
    on the labelled file ``path`` and compare it with TF-IDF and static vectors on a held-out test
    split (60/20/20, stratified, ``seed``). ``epochs`` and ``min_steps``: at least so many of each
    (chapter 8.7's recipe: 10 and 100). ``learning_rates``: the peak rates tried (default
    ``LEARNING_RATES[model]``); ``max_length``: tokens read per text (default ``READS[model]``;
    longer texts are cut, with a warning and a count in the report). With ``out``, writes the
    folder (never over a non-empty one unless ``overwrite``; nothing at all on an error)."""
    from tqdm.auto import tqdm

    check_choice("model", model, MODELS)
    check_int("seed", seed, minimum=0)
    check_int("epochs", epochs)
    check_int("min_steps", min_steps)
    check_instance("overwrite", overwrite, bool, "True or False")
    rates = tuple(learning_rates or LEARNING_RATES[model])
    if not all(isinstance(r, float | int) and 0 < r < 1 for r in rates):
        raise ValueError(f"learning_rates must be numbers in (0, 1), got {learning_rates!r}")
    reads = READS[model] if max_length is None else max_length
    check_int("max_length", reads, minimum=3)
    out = _check_out(out, overwrite)
    path = Path(path) if isinstance(path, str | os.PathLike) else path
    data = read_labelled(path, text_column, label_column)
    _check_classes(data, path, label_column)
    started = time.perf_counter()

    encoder, tokenizer = _load_encoder(model)
    if reads > encoder.config.max_position_embeddings:
        raise ValueError(
            f"max_length: the {model} model reads at most "
            f"{encoder.config.max_position_embeddings} tokens, got {reads}"
        )
    tokenizer.model_max_length = reads
    lengths = [len(ids) for ids in tokenizer(data.texts, verbose=False)["input_ids"]]
    cut = [row for row, n in zip(data.rows, lengths, strict=True) if n > reads]
    if cut:
        warnings.warn(
            f"{len(cut)} of {len(data.texts)} texts are longer than the {reads} tokens the "
            f"{model} model reads ({_rows_named(cut)}): only their first {reads - 2} pieces are "
            "read. Shorten them, split them, or pass a larger max_length.",
            stacklevel=2,
        )
    encoded = _encode(tokenizer, data.texts, reads)
    index = {name: i for i, name in enumerate(data.classes)}
    targets = np.array([index[label] for label in data.labels])
    split = np.array(stratified_split(data.labels, seed))
    parts = {name: np.flatnonzero(split == name) for name in SPLIT_NAMES}
    subset = lambda rows: {k: v[torch.from_numpy(rows)] for k, v in encoded.items()}  # noqa: E731

    train_targets = torch.from_numpy(targets[parts["train"]])
    steps = _fine_tune_steps(len(parts["train"]), epochs, min_steps)
    quiet = {} if progress else {"disable": True}  # else tqdm's own default (TQDM_DISABLE=1)
    bar = tqdm(total=steps * len(rates), desc=f"fine-tuning at {len(rates)} rates", **quiet)
    tried, best = {}, None
    for lr in rates:
        classifier = _fine_tune(
            encoder, len(data.classes), subset(parts["train"]), train_targets, lr, seed,
            epochs=epochs, min_steps=min_steps, progress=bar,
        )  # fmt: skip
        guess = _predict_ids(classifier, subset(parts["validation"])).argmax(1)
        tried[lr] = float((guess == targets[parts["validation"]]).mean())
        if best is None or tried[lr] > tried[best[0]]:
            best = (lr, classifier)
    bar.close()
    lr, classifier = best
    finetuned = _predict_ids(classifier, encoded).argmax(1)
    special = [tokenizer.cls_token_id, tokenizer.sep_token_id, tokenizer.pad_token_id]
    linear = _baselines(data.texts, targets, split, _static_vectors(encoder, encoded, special))

    test = parts["test"]
    accuracy = lambda guess: round(float((guess[test] == targets[test]).mean()), 4)  # noqa: E731
    confusion = np.zeros((len(data.classes), len(data.classes)), dtype=int)
    for true, guess in zip(targets[test], finetuned[test], strict=True):
        confusion[true, guess] += 1
    counts = {name: data.labels.count(name) for name in data.classes}
    report = {
        "file": path.name,
        "text_column": text_column,
        "label_column": label_column,
        "model": model,
        "rows": len(data.texts),
        "classes": data.classes,
        "class_counts": counts,
        "seed": seed,
        "split": {name: len(parts[name]) for name in SPLIT_NAMES},
        "max_length": reads,
        "truncated": {"count": len(cut), "rows": cut},
        "finetuned": {
            "lr": lr,
            "validation": {f"{r:g}": round(v, 4) for r, v in tried.items()},
            "steps": steps,
            "epochs": epochs,
            "confusion": confusion.tolist(),
        },
        "tfidf": {"C": linear["tfidf"]["C"], "validation": _rounded(linear["tfidf"])},
        "static": {"C": linear["static"]["C"], "validation": _rounded(linear["static"])},
        "test": {
            "finetuned": accuracy(finetuned),
            "tfidf": accuracy(linear["tfidf"]["predicted"]),
            "static": accuracy(linear["static"]["predicted"]),
            "majority": round(max(np.bincount(targets[test])) / len(test), 4),
        },
        "seconds": round(time.perf_counter() - started, 1),
        "threads": torch.get_num_threads(),
    }
    predictions = [
        {
            "row": row,
            "split": split[i],
            "text": data.texts[i],
            "label": data.labels[i],
            "finetuned": data.classes[finetuned[i]],
            "tfidf": data.classes[linear["tfidf"]["predicted"][i]],
            "static": data.classes[linear["static"]["predicted"][i]],
        }
        for i, row in enumerate(data.rows)
    ]
    result = FineTuneResult(report, predictions, classifier, tokenizer, out, reads)
    if out is not None:
        report["transformers_max_difference"] = _write(result, out, subset(test))
    return result


def _rounded(linear: dict) -> dict:
    return {f"{c:g}": round(v, 4) for c, v in linear["validation"].items()}


def to_transformers(result: FineTuneResult):
    """The fine-tuned classifier as a ``transformers.BertForSequenceClassification`` (same weights,
    by name; ``id2label`` the classes)."""
    import transformers

    config = result.classifier.bert.config
    classes = result.report["classes"]
    hf_config = transformers.BertConfig(
        vocab_size=config.vocab_size,
        hidden_size=config.hidden_size,
        num_hidden_layers=config.num_hidden_layers,
        num_attention_heads=config.num_attention_heads,
        intermediate_size=config.intermediate_size,
        hidden_act=config.hidden_act,  # "gelu": the exact (erf) GELU in both
        hidden_dropout_prob=config.hidden_dropout_prob,
        attention_probs_dropout_prob=config.attention_probs_dropout_prob,
        max_position_embeddings=config.max_position_embeddings,
        type_vocab_size=config.type_vocab_size,
        layer_norm_eps=config.layer_norm_eps,
        pad_token_id=config.pad_token_id,
        initializer_range=config.initializer_range,
        num_labels=len(classes),
        id2label=dict(enumerate(classes)),
        label2id={name: i for i, name in enumerate(classes)},
        problem_type="single_label_classification",
        architectures=["BertForSequenceClassification"],
    )
    model = transformers.BertForSequenceClassification(hf_config)
    missing, unexpected = model.load_state_dict(result.classifier.state_dict(), strict=False)
    missing = [name for name in missing if not name.endswith("position_ids")]
    if missing or unexpected:
        raise RuntimeError(f"names differ from transformers': {missing} {unexpected}")
    return model.eval()


def _write(result: FineTuneResult, out: Path, test: dict) -> float:
    """Write the folder through a temporary sibling, moved into place at the end; return the
    largest difference between our logits and transformers' on the test rows."""
    import matplotlib.pyplot as plt

    hf = to_transformers(result)
    with torch.no_grad():
        theirs = hf(input_ids=test["input_ids"], attention_mask=test["attention_mask"]).logits
    ours = _predict_ids(result.classifier, test)
    difference = float(np.abs(theirs.numpy() - ours).max())
    if difference > 1e-3:
        raise RuntimeError(f"transformers' logits differ from ours by {difference:.2g}")
    out.parent.mkdir(parents=True, exist_ok=True)
    temporary = Path(tempfile.mkdtemp(prefix=f".{out.name}-", dir=out.parent))
    try:
        hf.save_pretrained(temporary)
        result.tokenizer.save_pretrained(temporary)
        with open(temporary / "predictions.csv", "w", newline="", encoding="utf-8") as file:
            writer = csv.DictWriter(file, fieldnames=list(result.predictions[0]))
            writer.writeheader()
            writer.writerows(result.predictions)
        report = result.report | {"transformers_max_difference": difference}
        (temporary / "report.json").write_text(json.dumps(report, indent=1) + "\n")
        fig = result.figure()
        fig.savefig(temporary / "report.png", dpi=120)
        plt.close(fig)
        if out.exists():
            shutil.rmtree(out)
        os.replace(temporary, out)
    except BaseException:
        shutil.rmtree(temporary, ignore_errors=True)
        raise
    return difference


def main(argv: list[str] | None = None) -> FineTuneResult:
    parser = argparse.ArgumentParser(
        prog="python -m attention_to_bert.finetune",
        description="Fine-tune the book's BERT (or MiniLM) on your labelled CSV/TSV file and "
        "compare it with TF-IDF and static vectors on a held-out test split.",
    )
    parser.add_argument("path", help="a .csv (commas) or .tsv (tabs) file with a header line")
    parser.add_argument("--text-column", default="text", help="the column of sentences")
    parser.add_argument("--label-column", default="label", help="the column of labels")
    parser.add_argument("--model", choices=MODELS, default="book")
    parser.add_argument("--out", help="the folder to write (default: FILE-finetuned beside you)")
    parser.add_argument("--overwrite", action="store_true", help="replace a non-empty --out")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=10, help="at least so many epochs")
    parser.add_argument("--min-steps", type=int, default=100, help="at least so many steps")
    parser.add_argument("--max-length", type=int, help="tokens read per text")
    parser.add_argument("--learning-rates", type=float, nargs="+", help="peak rates to try")
    args = parser.parse_args(argv)
    out = args.out or f"{Path(args.path).stem}-finetuned"
    try:
        result = finetune_csv(
            args.path,
            text_column=args.text_column,
            label_column=args.label_column,
            model=args.model,
            out=out,
            overwrite=args.overwrite,
            seed=args.seed,
            learning_rates=args.learning_rates,
            epochs=args.epochs,
            min_steps=args.min_steps,
            max_length=args.max_length,
        )
    except (ValueError, TypeError, OSError) as error:
        parser.exit(2, f"error: {error}\n")
    print(result.table())
    print(f"wrote {out}/: the model (transformers' layout), predictions.csv, report.json/.png")
    return result


if __name__ == "__main__":
    main()
