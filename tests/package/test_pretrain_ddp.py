"""``scripts/data/pretrain_bert.py`` under ``torchrun``: two CPU processes (gloo), each reading its own
shard, keep equal weights and take the same steps as one process that reads both shards with the
same global batch (``--shards 2``)."""

import json
import os
import subprocess
import sys

import pytest
import torch
from helpers import ROOT
from safetensors.torch import load_file

SCRIPT = ROOT / "scripts" / "data" / "pretrain_bert.py"
TOKENIZER = ROOT / "book" / "attention_to_bert" / "pretrained" / "tokenizer.json"
TINY = [
    "--corpus", "dictionary", "--steps", "3", "--hidden", "16", "--layers", "1", "--heads", "2",
    "--batch-size", "8", "--lr", "1e-3", "--warmup", "1", "--log-every", "1",
    "--save-every", "3", "--tokenizer", str(TOKENIZER),
]  # fmt: skip
# Two processes sum the two shards' gradients in another order than one process may, and Adam
# divides by the gradients' size, which can amplify the rounding: measured here, the weights were
# bit-equal (0.0) after 3 steps that moved them by up to 5e-3 (the whole-corpus run ends 5e-3 away).
TOLERANCE = 1e-5


def run(command: list[str], tmp_path) -> None:
    env = os.environ | {"OMP_NUM_THREADS": "1", "PYTHONPATH": str(ROOT / "book")}
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=900)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]


@pytest.mark.slow
def test_two_processes_keep_equal_weights_and_match_one_process_with_the_same_global_batch(
    tmp_path,
):
    torchrun = [sys.executable, "-m", "torch.distributed.run", "--standalone"]
    run(
        [*torchrun, "--nproc_per_node", "2", str(SCRIPT), *TINY, "--out", str(tmp_path / "ddp")],
        tmp_path,
    )
    run(
        [sys.executable, str(SCRIPT), *TINY, "--shards", "2", "--out", str(tmp_path / "one")],
        tmp_path,
    )
    run([sys.executable, str(SCRIPT), *TINY, "--out", str(tmp_path / "whole")], tmp_path)

    info = json.loads((tmp_path / "ddp" / "config.json").read_text())
    assert (info["processes"], info["shards"]) == (2, 2)
    assert info["replicas_max_difference"] == 0.0  # DDP: the ranks' weights stay bit-equal
    ddp, one, whole = (
        load_file(tmp_path / name / "model.safetensors") for name in ("ddp", "one", "whole")
    )
    assert ddp.keys() == one.keys()
    gap = max(float((ddp[k] - one[k]).abs().max()) for k in ddp)
    assert gap < TOLERANCE, gap
    # the test could fail: one process reading the whole corpus (other batches) ends elsewhere
    moved = max(float((whole[k] - one[k]).abs().max()) for k in ddp)
    assert moved > 100 * TOLERANCE, moved
    # the logs agree too: the ranks' losses averaged as one process averages its shards'
    logs = [json.loads((tmp_path / n / "config.json").read_text())["log"] for n in ("ddp", "one")]
    for a, b in zip(*logs, strict=True):
        assert a["mlm_loss"] == pytest.approx(b["mlm_loss"], abs=1e-3)
    assert torch.isfinite(torch.tensor(logs[0][-1]["mlm_loss"]))
