"""The book's own pre-training (chapter 8): the heads, the masking, the pair sampler, the script's
determinism and errors, the shipped checkpoint, and ``mlm.fill_mask`` / ``mlm.evaluate_mlm``."""

from pathlib import Path
from types import SimpleNamespace

import pytest
import torch
from helpers import load_script
from safetensors.torch import load_file

from attention_to_bert import mlm, pretraining
from attention_to_bert.bert import BertConfig
from attention_to_bert.data import PairSampler, sentiment, wordnet
from attention_to_bert.pretraining import BertForPreTraining, mask_tokens

SHIPPED = pretraining.PRETRAINED


def script():
    return load_script("scripts/data/pretrain_bert.py")


def tiny() -> BertForPreTraining:
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=50,
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=16,
    )
    return BertForPreTraining(config)


def test_mlm_head_is_tied_to_the_token_table_and_scores_only_the_chosen_positions():
    model = tiny().eval()
    ids = torch.randint(5, 50, (2, 7))
    positions = torch.zeros(2, 7, dtype=torch.bool)
    positions[0, 3] = positions[1, 5] = True
    few, nsp = model(ids, positions=positions)
    every, _ = model(ids)
    assert few.shape == (2, 50) and every.shape == (2, 7, 50) and nsp.shape == (2, 2)
    torch.testing.assert_close(few, every[positions])
    with torch.no_grad():
        model.bert.embeddings.word_embeddings.weight[7] += torch.randn(
            16
        )  # not a constant: LayerNorm
    changed, _ = model(ids, positions=positions)
    assert not torch.allclose(changed[:, 7], few[:, 7])  # the decoder reads the token table
    names = set(model.state_dict())
    assert "cls.predictions.bias" in names and not any("decoder" in n for n in names)


def test_positions_must_be_a_bool_mask_of_the_input_shape():
    with pytest.raises(TypeError, match="positions must be a bool tensor"):
        tiny()(torch.ones(1, 4, dtype=torch.long), positions=torch.ones(1, 4))
    with pytest.raises(ValueError, match=r"positions must have shape \(1, 4\)"):
        tiny()(torch.ones(1, 4, dtype=torch.long), positions=torch.ones(1, 3, dtype=torch.bool))


def test_masking_follows_80_10_10_and_leaves_its_input_alone():
    ids = torch.randint(5, 1000, (300, 200))
    special = torch.zeros_like(ids, dtype=torch.bool)
    special[:, 0] = True
    before = ids.clone()
    inputs, labels = mask_tokens(ids, special, 4, 1000, torch.Generator().manual_seed(0))
    assert torch.equal(ids, before)
    chosen = labels != -100
    assert not chosen[special].any()
    assert abs(chosen.float().mean().item() - 0.15 * 199 / 200) < 0.005
    assert torch.equal(labels[chosen], ids[chosen])
    assert abs((inputs[chosen] == 4).float().mean().item() - 0.8) < 0.02
    assert torch.equal(inputs[~chosen], ids[~chosen])


def test_pair_sampler_builds_next_and_random_pairs_with_segments():
    documents = [[[10, 11], [12, 13, 14]], [[20]], [[30, 31], [32]]]
    sampler = PairSampler(documents, cls_id=2, sep_id=3, max_length=8, seed=0)
    batch = sampler.batch(200)
    labels = batch["nsp_labels"]
    assert set(labels.tolist()) == {-100, 0, 1}
    for row in range(200):
        ids = batch["input_ids"][row]
        assert ids[0] == 2 and (ids == 3).sum() in (1, 2)
        if labels[row] == 0:  # B is the sentence that follows A in its document
            first_sep = int((ids == 3).nonzero()[0])
            a = ids[1:first_sep].tolist()
            b = ids[first_sep + 1 :][batch["token_type_ids"][row, first_sep + 1 :] == 1][:-1]
            assert (a, b.tolist()) in [([10, 11], [12, 13, 14]), ([30, 31], [32])]
    with pytest.raises(ValueError, match="documents"):
        PairSampler([], 2, 3)


def test_the_packed_sampler_builds_the_same_kind_of_examples_with_tensors():
    documents = [[[10, 11], [12, 13, 14]], [[20]], [[30, 31], [32]]]
    sentences = {(10, 11), (12, 13, 14), (20,), (30, 31), (32,)}
    sampler = script().PackedPairSampler  # only the script uses it
    batch = sampler(documents, cls_id=2, sep_id=3, max_length=8, seed=0).batch(200)
    labels = batch["nsp_labels"]
    assert set(labels.tolist()) == {-100, 0, 1}
    for row in range(200):
        ids, types = batch["input_ids"][row], batch["token_type_ids"][row]
        real = batch["attention_mask"][row].bool()
        assert ids[0] == 2 and ids[real][-1] == 3 and not ids[~real].any()
        seps = (ids == 3).nonzero()[:, 0].tolist()
        a = tuple(ids[1 : seps[0]].tolist())
        assert a in sentences and len(seps) == (1 if labels[row] == -100 else 2)
        assert torch.equal(batch["special"][row], ~real | (ids == 2) | (ids == 3))
        if labels[row] != -100:
            b = tuple(ids[seps[0] + 1 : seps[1]].tolist())
            assert b in sentences and types[seps[0] + 1 : seps[1] + 1].all()
            assert not types[: seps[0] + 1].any()
        if labels[row] == 0:
            assert (a, b) in [((10, 11), (12, 13, 14)), ((30, 31), (32,))]
    again = sampler(documents, cls_id=2, sep_id=3, max_length=8, seed=0).batch(200)
    assert all(torch.equal(batch[k], again[k]) for k in batch)


def test_the_script_is_deterministic_on_its_first_steps(tmp_path, capsys):
    module = script()
    tokenizer = SHIPPED / "tokenizer.json"
    args = [
        "--steps",
        "3",
        "--hidden",
        "16",
        "--layers",
        "1",
        "--heads",
        "2",
        "--batch-size",
        "8",
        "--log-every",
        "1",
        "--save-every",
        "3",
        "--tokenizer",
        str(tokenizer),
    ]
    first = module.main(args + ["--out", str(tmp_path / "a")])["log"]
    second = module.main(args + ["--out", str(tmp_path / "b")])["log"]
    assert [r["mlm_loss"] for r in first] == [r["mlm_loss"] for r in second]
    a, b = (
        load_file(tmp_path / "a" / "model.safetensors"),
        load_file(tmp_path / "b" / "model.safetensors"),
    )
    assert all(torch.equal(a[name], b[name]) for name in a)
    assert first[0]["mlm_loss"] > 8  # about ln(8000) = 9.0 at the start: the log is real


def test_init_goes_on_from_a_checkpoint_and_keeps_its_recipe(tmp_path, capsys):
    module = script()
    tiny = ["--hidden", "16", "--layers", "1", "--heads", "2", "--batch-size", "8"]
    tiny += ["--log-every", "1", "--tokenizer", str(SHIPPED / "tokenizer.json")]
    first = module.main(tiny + ["--steps", "4", "--save-every", "4", "--out", str(tmp_path / "a")])
    again = ["--init", str(tmp_path / "a"), "--steps", "2", "--save-every", "2", "--seed", "1"]
    second = module.main(again + ["--log-every", "1", "--out", str(tmp_path / "b")])["log"]
    twice = module.main(again + ["--log-every", "1", "--out", str(tmp_path / "c")])["log"]
    assert [r["mlm_loss"] for r in second] == [r["mlm_loss"] for r in twice]
    model, _, info = pretraining.load_pretrained(tmp_path / "b")
    assert model.bert.config.hidden_size == 16  # the architecture is the checkpoint's
    assert info["recipe"]["init"].endswith("a") and info["steps_done"] == 2
    (earlier,) = info["history"]
    assert earlier["steps_done"] == 4 and earlier["recipe"]["steps"] == 4
    assert earlier["log"] == first["log"]
    with pytest.raises(SystemExit, match="--init"):
        module.main(["--init", str(tmp_path / "nothing"), "--out", str(tmp_path / "d")])


def test_the_script_names_missing_files_and_an_empty_corpus(tmp_path):
    module = script()
    with pytest.raises(SystemExit, match="--evaluate: no such file"):
        module.main(["--evaluate", str(tmp_path / "missing.txt")])
    empty = tmp_path / "empty.txt"
    empty.write_text("\n  \n")
    with pytest.raises(SystemExit, match="empty corpus"):
        module.main(["--evaluate", str(empty)])
    text = tmp_path / "text.txt"
    text.write_text("the cat sat on the mat .\n")
    with pytest.raises(SystemExit, match="--out"):
        module.main(["--evaluate", str(text), "--out", str(tmp_path / "nothing")])
    with pytest.raises(SystemExit, match="--tokenizer: no such file"):
        module.main(
            ["--steps", "1", "--tokenizer", str(tmp_path / "none.json"), "--out", str(tmp_path)]
        )


@pytest.mark.parametrize("folder", [SHIPPED, pretraining.DICTIONARY])
def test_the_shipped_checkpoints_load_with_strict_keys_and_beat_the_unigram_baseline(folder):
    model, tokenizer, info = pretraining.load_pretrained(folder)
    state = load_file(folder / "model.safetensors")
    assert set(state) == set(model.state_dict())  # load_pretrained used strict=True as well
    recipe = info["recipe"]
    if recipe.get("budget_seconds"):  # trained for a time: the log ends when the time was spent
        assert info["log"][-1]["seconds"] >= recipe["budget_seconds"]
    else:
        assert info["steps_done"] == (recipe.get("stop_after") or recipe["steps"])
    assert info["log"][-1]["step"] == info["steps_done"]
    held_out = info["log"][-1]["held_out"]
    assert held_out["top5"] > held_out["unigram_top5"] + 0.05


@pytest.mark.recomputes
def test_the_everyday_model_fills_more_everyday_blanks_than_the_dictionary_one():
    from attention_to_bert.data.everyday import cloze_rows

    rows = cloze_rows()
    hits = {}
    for folder in (SHIPPED, pretraining.DICTIONARY):
        guesses = mlm.cloze_hits(rows, 5, folder=folder)
        hits[folder] = sum(answer in g for _, answer, g in guesses)
    _, _, info = pretraining.load_pretrained()
    assert hits[SHIPPED] == round(48 * info["log"][-1]["cloze"]["top5"])  # the log is the model's
    assert hits[SHIPPED] >= hits[pretraining.DICTIONARY] + 8


def test_evaluate_prints_accuracy_next_to_the_unigram_baseline(tmp_path, capsys):
    text = tmp_path / "text.txt"
    text.write_text(
        "a small dog ran across the road .\nshe drank a cup of tea in the garden .\n" * 20
    )
    result = script().main(["--evaluate", str(text)])
    out = capsys.readouterr().out
    assert "top-1" in out and "unigram" in out and result["masked"] > 0


class _Recorder(torch.nn.Module):
    """Wraps a model and keeps every input it is asked."""

    def __init__(self, model) -> None:
        super().__init__()
        self.model, self.bert, self.seen = model, model.bert, []

    def forward(self, inputs, token_type_ids, attention_mask, positions):
        self.seen.append((inputs.clone(), attention_mask.clone(), positions.clone()))
        return self.model(inputs, token_type_ids, attention_mask, positions)


def test_fill_mask_and_evaluate_mlm_ask_the_model_the_same_way():
    tokenizer = pretraining.load_tokenizer()
    torch.manual_seed(0)
    size = tokenizer.get_vocab_size()
    config = BertConfig(size, 16, 1, 2, 32, max_position_embeddings=32)
    recorder = _Recorder(BertForPreTraining(config).eval())
    text = "the old man walked to the house by the river with his dog"
    unigram = torch.ones(size, dtype=torch.long)
    mlm.evaluate_mlm(recorder, tokenizer, [text], unigram, seed=3)
    inputs, attention, positions = recorder.seen[-1]
    assert inputs[0, 0] == tokenizer.token_to_id("[CLS]") and positions.any()
    assert inputs[0, -1] == tokenizer.token_to_id("[SEP]")  # wrapped as in pre-training
    asked = " ".join(tokenizer.id_to_token(int(i)) for i in inputs[0, 1:-1])
    fills = mlm.fill_mask(asked, top_k=5, model=recorder, tokenizer=tokenizer)
    again, attention_again, positions_again = recorder.seen[-1]
    assert torch.equal(again, inputs) and torch.equal(positions_again, positions)
    assert torch.equal(attention_again, attention)
    scores = mlm.masked_scores(recorder, inputs, positions)
    best = [[tokenizer.id_to_token(int(i)) for i in row] for row in scores.topk(5).indices]
    assert fills == best and len(fills) == int(positions.sum())


def test_fill_mask_returns_top_k_tokens_per_mask():
    fills = mlm.fill_mask("the [MASK] sat on the [MASK] .", top_k=3)
    assert len(fills) == 2 and all(len(f) == 3 for f in fills)
    assert all(isinstance(t, str) and not t.startswith("[") for f in fills for t in f)


@pytest.mark.parametrize(
    "text, top_k, error, message",
    [
        ("", 5, ValueError, r"must contain \[MASK\].*got ''"),
        ("the cat sat on the mat .", 5, ValueError, r"must contain \[MASK\]"),
        (None, 5, TypeError, "text must be a str"),
        ("the [MASK] .", 0, ValueError, r"top_k must be in \[1, "),
        ("the [MASK] .", 2.0, TypeError, "top_k must be an int"),
        ("the [MASK] " + "word " * 80, 5, ValueError, "tokens long"),
    ],
)
def test_fill_mask_refuses_bad_input(text, top_k, error, message):
    with pytest.raises(error, match=message):
        mlm.fill_mask(text, top_k=top_k)


def test_the_fine_tuning_test_sentences_are_never_trained_on():
    pool, validation, test = sentiment.finetuning_splits()
    assert len(test) == 600 and len(validation) == 283
    test_text = {s for s, _ in test}
    assert not test_text & {s for s, _ in pool + validation}
    corpus = {s for doc in wordnet.corpus_documents() for s in doc}
    assert not test_text & corpus  # pre-training never read them either
    small, large = sentiment.training_set(pool, 16, 0), sentiment.training_set(pool, 64, 1)
    assert len(small) == 16 and len(large) == 64 and small != large[:16]


def test_the_cloze_sentences_are_not_in_the_corpus():
    path = Path(pretraining.__file__).parent / "data" / "cloze.tsv"
    rows = [line.split("\t") for line in path.read_text().splitlines()]
    corpus = {s.lower() for doc in wordnet.corpus_documents() for s in doc}
    assert len(rows) >= 40
    assert all(s.count("[MASK]") == 1 and s.replace("[MASK]", w) not in corpus for s, w in rows)


class _Copier(torch.nn.Module):
    """A 'model' that answers every question with the token it is shown there."""

    def __init__(self, vocab_size: int) -> None:
        super().__init__()
        self.vocab_size = vocab_size
        self.bert = SimpleNamespace(config=SimpleNamespace(max_position_embeddings=64))

    def forward(self, inputs, token_type_ids, attention_mask, positions):
        return torch.nn.functional.one_hot(inputs[positions], self.vocab_size).float(), None


def test_evaluate_mlm_shows_every_question_as_mask_so_copying_scores_nothing():
    tokenizer = pretraining.load_tokenizer()
    size = tokenizer.get_vocab_size()
    texts = ["a small dog ran across the road to the house of the old man ."] * 40
    unigram = torch.ones(size, dtype=torch.long)
    copier = _Copier(size)
    assert mlm.evaluate_mlm(copier, tokenizer, texts, unigram)["top1"] == 0.0
    # training's 80/10/10 rule leaves about 10% of the questions unchanged: copying scores there
    inflated = mlm.evaluate_mlm(copier, tokenizer, texts, unigram, bert_rule=True)
    assert 0.04 < inflated["top1"] < 0.2


def test_pretraining_losses_are_finite_when_no_token_is_masked():
    """One two-token sentence: most draws of 15% choose no token; the MLM loss is then 0, not NaN,
    and it still has a gradient (issue 34)."""
    model, generator = tiny(), torch.Generator().manual_seed(0)
    ids = torch.tensor([[2, 7, 8, 3]])
    batch = dict(
        input_ids=ids,
        token_type_ids=torch.zeros_like(ids),
        attention_mask=torch.ones_like(ids),
        special=torch.tensor([[True, False, False, True]]),
        nsp_labels=torch.tensor([-100]),
    )
    draws = [pretraining.pretraining_losses(model, batch, 4, generator) for _ in range(8)]
    empty = [draw for draw in draws if draw[2] == 0 and draw[0] == 0]
    assert empty and all(torch.isfinite(torch.stack(draw[:2])).all() for draw in draws)
    empty[0][0].backward()


def test_mean_pool_of_a_row_without_tokens_is_zero():
    from attention_to_bert.classifier import mean_pool

    hidden = torch.randn(2, 3, 4)
    pooled = mean_pool(hidden, torch.tensor([[1, 1, 0], [0, 0, 0]]))
    assert torch.allclose(pooled[0], hidden[0, :2].mean(0)) and torch.equal(
        pooled[1], torch.zeros(4)
    )


def test_says_next_scores_each_pair_as_if_alone_and_refuses_no_pairs():
    model, tokenizer, _ = pretraining.load_pretrained(pretraining.DICTIONARY)
    pairs = [
        ("a domesticated carnivorous mammal", "the dog barked all night"),
        ("move fast", "he ran to the store before it closed for the day"),
        ("the dog barked all night", "a domesticated carnivorous mammal"),
    ]
    alone = [pretraining.says_next(model, tokenizer, [pair]) for pair in pairs]
    assert set(alone) <= {0.0, 1.0}
    together = pretraining.says_next(model, tokenizer, pairs)  # padded
    assert together == pytest.approx(sum(alone) / len(alone))
    with pytest.raises(ValueError, match="at least one"):
        pretraining.says_next(model, tokenizer, [])
