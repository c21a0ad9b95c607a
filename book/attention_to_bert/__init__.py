"""Helper package of the book *From Attention to BERT*: each chapter derives a piece step by step in
its notebook, this package keeps the final version for later chapters. Submodules are imported on
demand (``from attention_to_bert import attention``), so importing the package itself stays cheap."""

import sys

from attention_to_bert.training import set_seed

if "ipykernel" in sys.modules:  # in a notebook: every figure is stored with a text alternative
    from attention_to_bert.plotting import describe_figures_in_notebooks

    describe_figures_in_notebooks()

__all__ = ["set_seed"]
__version__ = "0.1.0"
