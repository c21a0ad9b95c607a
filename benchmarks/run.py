"""Benchmarks of the book: our implementations against the references, and the book's own run time.

    python benchmarks/run.py                  # everything: about 4 minutes on a quiet 2-core laptop, most of it
                                              # executing the notebooks (--only mha bert scaling: about 2)
    python benchmarks/run.py --only mha bert  # some sections: mha, bert, scaling, notebooks, alone, site
    python benchmarks/run.py --only alone --notebooks book/02_han.ipynb  # some lessons opened alone
    python benchmarks/run.py --quick          # fewer rounds and sizes: a smoke test, not for the record
    python benchmarks/run.py --device cuda    # force a device (default: CUDA when present, else the CPU)

Prints a table per section and writes them to ``benchmarks/results.md`` (the book's appendix page
includes it, section by section) and the plots to ``book/images/benchmark_*.png``. Running only some
sections replaces those sections in ``results.md`` and keeps the others.

Timings are medians over interleaved rounds (ours, reference, ours, reference, ...), so that a change
in the machine's load hits both sides alike: the ratios are more trustworthy than the milliseconds.
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results.md"
IMAGES = ROOT / "book" / "images"
sys.path.insert(0, str(ROOT / "book"))

from attention_to_bert import set_seed  # noqa: E402

MHA_TARGET, BERT_TARGET = 1.10, 1.05
CHAPTER_TARGET_S, BOOK_TARGET_S, SITE_TARGET_S = 75.0, 360.0, 60.0
MHA_SHAPES = [(32, 32, 128, 4), (16, 64, 256, 8), (8, 128, 512, 8), (4, 256, 512, 8)]
SCALING_LENGTHS = [64, 128, 256, 512, 1024, 2048]


# --- Measuring ---


def choose_device(prefer: str | None = None) -> torch.device:
    """The device to compute on: ``prefer`` (such as ``"cpu"``) if given, else CUDA when present."""
    if prefer is not None and not isinstance(prefer, str | torch.device):
        raise TypeError(f"prefer must be a device name such as 'cpu', got {type(prefer).__name__}")
    try:
        device = torch.device(prefer or ("cuda" if torch.cuda.is_available() else "cpu"))
    except RuntimeError:
        raise ValueError(f"prefer must be a device name such as 'cuda', got {prefer!r}") from None
    available = {"cuda": torch.cuda.is_available(), "mps": torch.backends.mps.is_available()}
    if not available.get(device.type, True):
        raise ValueError(f"prefer={prefer!r} was asked for, but this machine has no {device.type}")
    return device


def synchronize(device: torch.device) -> None:
    """Wait for queued GPU work (a no-op on the CPU), so that wall time covers the computation."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def seconds_per_call(function: Callable[[], object], device: torch.device, number: int) -> float:
    """Wall time of one call of ``function``, averaged over ``number`` back-to-back calls."""
    if number < 1:
        raise ValueError(f"number must be >= 1, got {number}")
    synchronize(device)
    start = time.perf_counter()
    for _ in range(number):
        function()
    synchronize(device)
    return (time.perf_counter() - start) / number


def compare(
    functions: dict[str, Callable[[], object]],
    device: torch.device,
    rounds: int = 7,
    budget: float = 0.2,
) -> dict[str, float]:
    """Median seconds per call of each function, measured in ``rounds`` interleaved rounds.

    Each function is warmed up, then called enough times per round to take about ``budget`` seconds,
    and the rounds alternate between the functions, so slow and fast moments of a busy machine are
    shared out evenly.
    """
    if not functions:
        raise ValueError("functions must name at least one function to time")
    if rounds < 1:
        raise ValueError(f"rounds must be >= 1, got {rounds}")
    numbers = {}
    for name, function in functions.items():
        function()  # warm up: first-call allocations, kernel selection
        once = seconds_per_call(function, device, 1)
        numbers[name] = max(1, int(budget / max(once, 1e-6)))
    samples: dict[str, list[float]] = {name: [] for name in functions}
    for _ in range(rounds):
        for name, function in functions.items():
            samples[name].append(seconds_per_call(function, device, numbers[name]))
    return {name: statistics.median(values) for name, values in samples.items()}


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A GitHub/MyST markdown table; every row must have as many cells as the header."""
    for row in rows:
        if len(row) != len(header):
            raise ValueError(
                f"each row needs {len(header)} cells like the header, got {len(row)}: {row!r}"
            )
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def verdict(value: float, target: float) -> str:
    return "yes" if value <= target else "**no**"


def pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


FIGURE_ALT = {  # what each figure shows, for readers who cannot see it
    "benchmark_mha.png": "Bar chart: milliseconds per forward and backward pass of our multi-head "
    "attention and torch.nn.MultiheadAttention for each batch, length and width",
    "benchmark_bert.png": "Bar chart: milliseconds per forward pass of our BERT and transformers' "
    "BertModel on MiniLM's weights, eager and SDPA attention",
    "benchmark_attention_scaling.png": "Log-log plot: time and memory of attention against "
    "sequence length, growing like the square of the length",
    "benchmark_notebooks.png": "Bar chart: seconds each chapter takes to execute on this machine",
}


def save_figure(fig, name: str) -> str:
    """Save ``fig`` as ``book/images/<name>`` and return the markdown image line for results.md."""
    IMAGES.mkdir(parents=True, exist_ok=True)
    fig.savefig(IMAGES / name, dpi=100)
    pyplot().close(fig)
    return f"![{FIGURE_ALT[name]}](../book/images/{name})"


# --- Multi-head attention: ours vs torch.nn.MultiheadAttention, forward + backward ---


def forward_backward(module: torch.nn.Module, x: torch.Tensor, **kwargs) -> None:
    """One self-attention forward pass and the backward pass of the summed output."""
    output, _ = module(x, x, x, **kwargs)
    output.sum().backward()


def bench_mha(
    device: torch.device,
    rounds: int,
    shapes: Sequence[tuple[int, int, int, int]] = MHA_SHAPES,
    plot: bool = True,
) -> str:
    """Our ``MultiHeadAttention`` against ``torch.nn.MultiheadAttention`` with the same weights."""
    from torch import nn

    from attention_to_bert.multihead import MultiHeadAttention

    rows, labels, ratios = [], [], []
    for batch, length, d_model, heads in shapes:
        set_seed(0, num_threads=None)
        reference = nn.MultiheadAttention(d_model, heads, batch_first=True).to(device)
        ours = MultiHeadAttention.from_torch(reference).to(device)
        x = torch.randn(batch, length, d_model, device=device, requires_grad=True)
        with torch.no_grad():  # same weights, same function: check before timing
            difference = (
                (ours(x, x, x)[0] - reference(x, x, x, need_weights=False)[0]).abs().max().item()
            )

        run_ours = partial(forward_backward, ours, x)
        run_torch = partial(
            forward_backward, reference, x, need_weights=True, average_attn_weights=False
        )
        times = compare({"ours": run_ours, "torch": run_torch}, device, rounds)
        ratio = times["ours"] / times["torch"]
        label = f"{batch}×{length}×{d_model}, {heads} heads"
        labels.append(label)
        ratios.append(ratio)
        rows.append(
            [
                label,
                f"{times['ours'] * 1e3:.2f}",
                f"{times['torch'] * 1e3:.2f}",
                f"{ratio:.2f}×",
                verdict(ratio, MHA_TARGET),
                f"{difference:.1e}",
            ]
        )
    text = markdown_table(
        [
            "batch×length×d_model",
            "ours (ms)",
            "torch (ms)",
            "ratio ours/torch",
            f"within {MHA_TARGET:.2f}×",
            "max abs diff of outputs",
        ],
        rows,
    )
    if plot:
        plt = pyplot()
        fig, ax = plt.subplots(figsize=(7, 3), layout="constrained")
        colors = ["tab:green" if r <= MHA_TARGET else "tab:red" for r in ratios]
        ax.barh(labels, ratios, color=colors)
        ax.axvline(1.0, color="black", linewidth=1)
        ax.axvline(MHA_TARGET, color="tab:red", linestyle="--", label=f"target {MHA_TARGET:.2f}×")
        ax.set(
            xlabel="time of ours / time of torch.nn.MultiheadAttention (lower is faster)",
            title=f"Multi-head attention, forward + backward ({device.type})",
        )
        ax.invert_yaxis()
        ax.legend(loc="lower right")
        text += "\n\n" + save_figure(fig, "benchmark_mha.png")
    return text


# --- BERT: ours vs transformers.BertModel on MiniLM, batch 8 × 128 tokens ---


def bench_bert(device: torch.device, rounds: int, plot: bool = True) -> str:
    """Our BERT forward pass against ``transformers.BertModel``, eager and SDPA attention, same weights."""
    from transformers import BertModel as HFBertModel
    from transformers.utils import logging as hf_logging

    from attention_to_bert.bert import load_minilm, minilm_path

    hf_logging.set_verbosity_error()
    models = {}
    for implementation in ("eager", "sdpa"):
        ours, _ = load_minilm(attn_implementation=implementation)
        models[f"ours ({implementation})"] = ours.to(device).eval()
        reference = HFBertModel.from_pretrained(
            str(minilm_path()), attn_implementation=implementation, add_pooling_layer=False
        )
        models[f"transformers ({implementation})"] = reference.to(device).eval()
    set_seed(0, num_threads=None)
    input_ids = torch.randint(1000, 20000, (8, 128), device=device)
    attention_mask = torch.ones_like(input_ids)
    attention_mask[4:, 100:] = 0  # some padding, as in a real batch

    def hidden_states(name: str) -> torch.Tensor:
        model = models[name]
        with torch.inference_mode():
            if name.startswith("ours"):  # no weights kept, like transformers' default
                return model(input_ids, attention_mask=attention_mask, output_attentions=False)[0]
            return model(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state

    keep = attention_mask.bool()
    outputs = {name: hidden_states(name)[keep] for name in models}  # real tokens only
    times = compare(
        {name: partial(hidden_states, name) for name in models}, device, rounds, budget=0.5
    )

    rows = []
    for implementation in ("eager", "sdpa"):
        ours, theirs = f"ours ({implementation})", f"transformers ({implementation})"
        ratio = times[ours] / times[theirs]
        difference = (outputs[ours] - outputs[theirs]).abs().max().item()
        rows.append(
            [
                implementation,
                f"{times[ours] * 1e3:.1f}",
                f"{times[theirs] * 1e3:.1f}",
                f"{ratio:.2f}×",
                verdict(ratio, BERT_TARGET),
                f"{difference:.1e}",
            ]
        )
    sdpa_vs_eager = (outputs["ours (sdpa)"] - outputs["ours (eager)"]).abs().max().item()
    text = markdown_table(
        [
            "attention",
            "ours (ms)",
            "transformers (ms)",
            "ratio ours/transformers",
            f"within {BERT_TARGET:.2f}×",
            "max abs diff of hidden states",
        ],
        rows,
    ) + (
        f"\n\nOur SDPA path against our eager path: max abs difference {sdpa_vs_eager:.1e} on the hidden states; "
        f"SDPA is {times['ours (eager)'] / times['ours (sdpa)']:.2f}× as fast as our eager attention here."
    )
    if plot:
        plt = pyplot()
        fig, ax = plt.subplots(figsize=(7, 2.8), layout="constrained")
        names = list(models)
        ax.barh(
            names,
            [times[name] * 1e3 for name in names],
            color=["tab:blue", "tab:gray", "tab:blue", "tab:gray"],
        )
        ax.set(
            xlabel="milliseconds per forward pass (lower is faster)",
            title=f"BERT forward, MiniLM, batch 8 × 128 ({device.type})",
        )
        ax.invert_yaxis()
        text += "\n\n" + save_figure(fig, "benchmark_bert.png")
    return text


# --- Attention cost against sequence length, and achieved GFLOP/s ---


def attention_flops(batch: int, length: int, dim: int) -> int:
    """Multiply-adds of Q K^T and of weights @ V, counted as 2 FLOPs each (the softmax is ignored)."""
    return 2 * 2 * batch * length * length * dim


def matmul_gflops(device: torch.device, rounds: int, size: int = 1024) -> float:
    """GFLOP/s of one plain ``size × size`` matrix product: the practical ceiling of this machine."""
    a, b = torch.randn(size, size, device=device), torch.randn(size, size, device=device)
    seconds = compare({"matmul": lambda: a @ b}, device, rounds)["matmul"]
    return 2 * size**3 / seconds / 1e9


def bench_scaling(
    device: torch.device, rounds: int, lengths: Sequence[int] = SCALING_LENGTHS, plot: bool = True
) -> str:
    """Time and memory of attention against n; our attention next to PyTorch's fused kernel and a matmul."""
    import torch.nn.functional as F

    from attention_to_bert.attention import attention

    batch, dim = 4, 64
    rows, ours_ms, sdpa_ms, memories = [], [], [], []
    for n in lengths:
        set_seed(0, num_threads=None)
        q, k, v = (torch.randn(batch, n, dim, device=device) for _ in range(3))
        times = compare(
            {
                "ours": lambda q=q, k=k, v=v: attention(q, k, v),
                "sdpa": lambda q=q, k=k, v=v: F.scaled_dot_product_attention(q, k, v),
            },
            device,
            rounds,
        )
        matrix_mib = (
            batch * n * n * 4 / 2**20
        )  # one float32 (batch, n, n) matrix: the scores, or the weights
        measured = ""
        if device.type == "cuda":  # the CPU has no peak-memory counter; the GPU does
            torch.cuda.reset_peak_memory_stats(device)
            base = torch.cuda.memory_allocated(device)
            attention(q, k, v)
            measured = f"{(torch.cuda.max_memory_allocated(device) - base) / 2**20:.1f}"
        flops = attention_flops(batch, n, dim)
        ours_ms.append(times["ours"] * 1e3)
        sdpa_ms.append(times["sdpa"] * 1e3)
        memories.append(matrix_mib)
        rows.append(
            [
                n,
                f"{times['ours'] * 1e3:.2f}",
                f"{times['sdpa'] * 1e3:.2f}",
                f"{matrix_mib:.1f}",
                measured or "–",
                f"{flops / times['ours'] / 1e9:.1f}",
                f"{flops / times['sdpa'] / 1e9:.1f}",
            ]
        )
    ceiling = matmul_gflops(device, rounds)
    growth = ""
    if len(lengths) >= 2:
        exponent = math.log(ours_ms[-1] / ours_ms[-2]) / math.log(lengths[-1] / lengths[-2])
        growth = f" From n = {lengths[-2]} to n = {lengths[-1]} our time grew as n^{exponent:.2f} (n² gives 2)."
    text = (
        f"One head, batch {batch}, d = {dim}, on {device.type}.\n\n"
        + markdown_table(
            [
                "n",
                "ours (ms)",
                "PyTorch SDPA (ms)",
                "one n×n matrix (MiB)",
                "measured peak (MiB)",
                "ours GFLOP/s",
                "SDPA GFLOP/s",
            ],
            rows,
        )
        + f"\n\nA plain 1024×1024 matrix product on the same machine: **{ceiling:.1f} GFLOP/s** (the practical "
        "ceiling). Our `attention` keeps the scores and the weights, two n×n matrices per example; the measured "
        "peak memory is shown on a GPU only." + growth
    )
    if plot:
        plt = pyplot()
        fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.5), layout="constrained")
        left.loglog(lengths, ours_ms, "o-", base=2, label="ours (attention)")
        left.loglog(lengths, sdpa_ms, "s-", base=2, label="PyTorch SDPA")
        reference = [ours_ms[-1] * (n / lengths[-1]) ** 2 for n in lengths]
        left.loglog(lengths, reference, ":", base=2, color="gray", label="∝ n²")
        left.set(xlabel="sequence length n", ylabel="time (ms)", title="attention time")
        left.legend()
        right.loglog(lengths, memories, "o-", base=2, color="tab:orange")
        right.set(
            xlabel="sequence length n", ylabel="MiB", title=f"one n×n weight matrix (batch {batch})"
        )
        from matplotlib.ticker import ScalarFormatter

        for axis in (left, right):  # plain numbers on the log axes, not powers of 2
            axis.set_xticks(lengths, [str(n) for n in lengths])
            axis.yaxis.set_major_formatter(ScalarFormatter())
        text += "\n\n" + save_figure(fig, "benchmark_attention_scaling.png")
    return text


# --- The book itself: notebooks and site build ---


def notebook_table(timings: Sequence[tuple[str, float | None, str]], whole: bool = True) -> str:
    """Rows of (notebook, seconds or None if it failed, note) as a table with the book's total
    (``whole``; otherwise the total of the notebooks run, with no target)."""
    rows, total, failed = [], 0.0, False
    for name, seconds, note in timings:
        if seconds is None:
            failed = True
            rows.append([name, "failed", "**no**", note])
        else:
            total += seconds
            rows.append([name, f"{seconds:.1f}", verdict(seconds, CHAPTER_TARGET_S), note])
    if whole:
        book = "failed" if failed else verdict(total, BOOK_TARGET_S)
        rows.append(
            ["**whole book**", f"**{total:.1f}**", book, f"target {BOOK_TARGET_S / 60:.0f} min"]
        )
    else:
        rows.append(["**these notebooks**", f"**{total:.1f}**", "", "not the whole book"])
    return markdown_table(["notebook", "seconds", f"within {CHAPTER_TARGET_S:.0f} s", "note"], rows)


def bench_notebooks(plot: bool = True, notebooks: Sequence[Path] | None = None) -> str:
    """Execute every chapter in a clean kernel, one after the other, without saving; a failure is a row."""
    sys.path.insert(0, str(ROOT / "scripts" / "notebooks"))
    from execute_notebooks import QUIET_ENV, execute

    os.environ.update(QUIET_ENV)
    timings: list[tuple[str, float | None, str]] = []
    for path in notebooks or sorted((ROOT / "book").glob("[0-9]*.ipynb")):
        print(f"  executing {path.name} ...", flush=True)
        start = time.perf_counter()
        try:
            seconds = execute(path, save=False)
            timings.append((path.stem, seconds, ""))
        except Exception as error:  # report it in the table, and go on with the next chapter
            name = getattr(error, "ename", type(error).__name__)
            timings.append((path.stem, None, f"{name} after {time.perf_counter() - start:.0f} s"))
    text = notebook_table(timings)
    if plot:
        plt = pyplot()
        fig, ax = plt.subplots(figsize=(7, 3), layout="constrained")
        names = [name for name, _, _ in timings]
        seconds = [s if s is not None else 0.0 for _, s, _ in timings]
        ax.barh(
            names,
            seconds,
            color=[
                "tab:green" if s is not None and s <= CHAPTER_TARGET_S else "tab:red"
                for _, s, _ in timings
            ],
        )
        ax.axvline(
            CHAPTER_TARGET_S,
            color="tab:red",
            linestyle="--",
            label=f"target {CHAPTER_TARGET_S:.0f} s",
        )
        ax.set(xlabel="seconds to execute (clean kernel)", title="Chapter execution time")
        ax.invert_yaxis()
        ax.legend(loc="lower right")
        text += "\n\n" + save_figure(fig, "benchmark_notebooks.png")
    return text


# what the test suite and scripts/notebooks/execute_notebooks.py set for their kernels and a reader's does not
SUITE_ONLY_ENV = ["OMP_WAIT_POLICY", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "TQDM_DISABLE"]
ALONE_CORES = 2


def two_cores() -> tuple[set[int] | None, str]:
    """Restrict this process (and the kernels it starts, which inherit it) to ``ALONE_CORES`` of
    the cores it may use; return the cores it had before (None where the OS cannot) and a note."""
    if not hasattr(os, "sched_setaffinity"):
        return (
            None,
            f"not pinned (no CPU affinity on {platform.system()}): all {os.cpu_count()} cores",
        )
    before = os.sched_getaffinity(0)
    pinned = set(sorted(before)[:ALONE_CORES])
    os.sched_setaffinity(0, pinned)
    return before, f"pinned to {len(pinned)} core(s) {sorted(pinned)}"


def run_alone(path: Path, timeout: int = 1800) -> float:
    """Execute the lesson copied alone into an empty folder, in a clean kernel with a reader's
    environment (none of SUITE_ONLY_ENV); return the seconds. Nothing is saved."""
    import nbformat
    from nbclient import NotebookClient

    saved = {name: os.environ.pop(name) for name in SUITE_ONLY_ENV if name in os.environ}
    try:
        with tempfile.TemporaryDirectory() as folder:
            copy = Path(folder) / path.name
            copy.write_bytes(path.read_bytes())
            notebook = nbformat.read(copy, as_version=4)
            client = NotebookClient(
                notebook,
                timeout=timeout,
                kernel_name="python3",
                resources={"metadata": {"path": folder}},
            )
            start = time.perf_counter()
            client.execute()
            return time.perf_counter() - start
    finally:
        os.environ.update(saved)


def bench_alone(notebooks: Sequence[Path] | None = None) -> str:
    """Each lesson opened alone on 2 cores, as a reader runs it: its stored timing is what the
    suite's kernels take (OMP_WAIT_POLICY=PASSIVE among their settings); a reader's JupyterLab has
    none of those, and on a busy machine that is what it feels."""
    before, pinning = two_cores()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    timings: list[tuple[str, float | None, str]] = []
    try:
        for path in notebooks or sorted((ROOT / "book").glob("[0-9][0-9]_*.ipynb")):
            print(f"  executing {path.name} alone ...", flush=True)
            start = time.perf_counter()
            try:
                timings.append((path.stem, run_alone(path), ""))
            except Exception as error:  # a row, and on with the next lesson
                name = getattr(error, "ename", type(error).__name__)
                timings.append(
                    (path.stem, None, f"{name} after {time.perf_counter() - start:.0f} s")
                )
    finally:
        if before is not None:
            os.sched_setaffinity(0, before)
    return (
        notebook_table(timings, whole=notebooks is None)
        + f"\n\nEach lesson copied into an empty folder and run in a clean kernel with a reader's "
        f"environment (none of {', '.join(SUITE_ONLY_ENV)} set), {pinning}; load average "
        f"{load:.1f} when the section began."
    )


def bench_site() -> str:
    """Time ``jupyter-book build .`` into an empty folder (no cache), from the stored notebook outputs."""
    jupyter_book = Path(sys.executable).parent / "jupyter-book"
    with tempfile.TemporaryDirectory() as output:
        start = time.perf_counter()
        result = subprocess.run(
            [str(jupyter_book), "build", ".", "--path-output", output],
            cwd=ROOT,
            capture_output=True,
            text=True,
        )
        seconds = time.perf_counter() - start
    if result.returncode != 0:
        last = (result.stderr or result.stdout).strip().splitlines()[-1:] or [""]
        return f"`jupyter-book build .` **failed** after {seconds:.1f} s: `{last[0][:200]}`"
    return markdown_table(
        ["command", "seconds", f"within {SITE_TARGET_S:.0f} s"],
        [
            [
                "`jupyter-book build .` (empty output folder)",
                f"{seconds:.1f}",
                verdict(seconds, SITE_TARGET_S),
            ]
        ],
    )


# --- results.md: one marked block per section, so that --only replaces just those ---

TITLES = {
    "mha": "Multi-head attention, forward + backward",
    "bert": "BERT forward (all-MiniLM-L6-v2), batch 8 × 128 tokens",
    "scaling": "Attention cost against sequence length",
    "notebooks": "Executing the chapters (clean kernel, top to bottom)",
    "alone": "Each lesson opened alone on 2 cores (a reader's kernel)",
    "site": "Building the website from the stored outputs",
}
SECTIONS = list(TITLES)
BLOCK = re.compile(r"<!-- begin (\w+) -->\n(.*?)\n<!-- end \1 -->", re.S)


def read_blocks(text: str) -> dict[str, str]:
    """The sections of a results.md written by ``write_results``: {name: markdown}."""
    return {match.group(1): match.group(2) for match in BLOCK.finditer(text)}


def write_results(path: Path, header: str, blocks: dict[str, str]) -> None:
    """Write the header and each section's title, then its body between markers (the book includes bodies)."""
    parts = ["# Benchmark results", f"<!-- begin header -->\n{header}\n<!-- end header -->"]
    for name, title in TITLES.items():
        body = blocks.get(name, f"Not measured yet: run `python benchmarks/run.py --only {name}`.")
        parts.append(f"## {title}\n\n<!-- begin {name} -->\n{body}\n<!-- end {name} -->")
    path.write_text("\n\n".join(parts) + "\n")


def describe_machine(device: torch.device, quick: bool) -> str:
    processor = platform.processor() or platform.machine()
    accelerator = (
        f"on the GPU ({torch.cuda.get_device_name(device)})"
        if device.type == "cuda"
        else "on the CPU (no GPU was present)"
    )
    load = os.getloadavg()[0]
    busy = load > (os.cpu_count() or 1)
    return (
        f"Measured {time.strftime('%Y-%m-%d')} {accelerator}: {processor}, {os.cpu_count()} CPU cores, "
        f"Python {platform.python_version()}, torch {torch.__version__}; load average {load:.1f} when the run began"
        + (
            " (above the core count, other programs were competing: trust the ratios, not the ms). "
            if busy
            else ". "
        )
        + (
            "Produced by `python benchmarks/run.py --quick` (a smoke test: fewer rounds and sizes, not for the record)."
            if quick
            else "Produced by `python benchmarks/run.py`."
        )
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--only", nargs="+", choices=SECTIONS, help="run only these sections")
    parser.add_argument(
        "--quick", action="store_true", help="fewer rounds and sizes (a smoke test)"
    )
    parser.add_argument(
        "--device", default=None, help="cpu or cuda (default: chosen automatically)"
    )
    parser.add_argument(
        "--threads", type=int, default=2, help="PyTorch CPU threads (default 2, as the book)"
    )
    parser.add_argument(
        "--notebooks",
        nargs="+",
        type=Path,
        default=None,
        help="the lessons the alone section runs (default: every lesson)",
    )
    parser.add_argument(
        "--output",
        type=Path,
        default=RESULTS,
        help="markdown file to write (plots are drawn only for the default, the book's)",
    )
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    set_seed(0, num_threads=args.threads)
    device = choose_device(args.device)
    rounds = 3 if args.quick else 9
    plot = args.output.resolve() == RESULTS  # the book's plots belong to the book's results.md only
    runners = {
        "mha": lambda: bench_mha(
            device, rounds, MHA_SHAPES[:2] if args.quick else MHA_SHAPES, plot=plot
        ),
        "bert": lambda: bench_bert(device, rounds, plot=plot),
        "scaling": lambda: bench_scaling(
            device, rounds, SCALING_LENGTHS[:4] if args.quick else SCALING_LENGTHS, plot=plot
        ),
        "notebooks": lambda: bench_notebooks(plot=plot),
        "alone": lambda: bench_alone(args.notebooks),
        "site": bench_site,
    }
    blocks = read_blocks(args.output.read_text()) if args.output.exists() else {}
    started = time.perf_counter()
    for name in args.only or SECTIONS:
        print(f"running {name} ...", flush=True)
        section_start = time.perf_counter()
        try:
            blocks[name] = runners[name]()
        except Exception:  # one broken section must not lose the others
            failure = traceback.format_exc(limit=3).replace(str(ROOT), ".")
            blocks[name] = f"This section failed:\n\n```\n{failure}```"
        seconds = time.perf_counter() - section_start
        blocks[name] += (
            f"\n\n_Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on {device.type}, "
            f"{torch.get_num_threads()} PyTorch thread(s){', `--quick`' if args.quick else ''}; "
            f"this section took {seconds:.0f} s._"
        )
        print(blocks[name] + "\n", flush=True)
        write_results(args.output, describe_machine(device, args.quick), blocks)
    print(f"written to {args.output} in {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
