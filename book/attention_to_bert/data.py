"""Generated data sets and vocabularies, all seeded; nothing is downloaded.

One section per chapter that needs data. Every generator takes a ``seed`` and returns the same data
for the same seed on every machine (it uses its own ``random.Random(seed)``, not global state).
"""

from __future__ import annotations

# --- Chapter 1: a noisy 1-D function for attention pooling (Nadaraya–Watson) ---

# --- Chapter 2: documents whose label is decided by a few known sentences and words (HAN) ---

# --- Chapter 3: human-written dates -> ISO dates, character level (seq2seq; reused in chapter 6) ---

# --- Chapter 4: a toy task whose self-attention map is meaningful ---

# --- Chapter 7: a small corpus for masked-LM and next-sentence pre-training ---
