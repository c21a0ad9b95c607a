"""Checkers for the coding exercises: call one on your own function to hear what is wrong with it.

    from attention_to_bert import checks
    checks.masked_softmax(my_masked_softmax)

A checker runs the function on a few test cases, prints either that it passes or, in plain words,
the first thing wrong on each failing case, and returns ``True`` or ``False``. ``checker.Checker``
collects the cases; ``chNN`` holds the checkers of chapter NN.
"""

from attention_to_bert.checks.ch01 import masked_softmax, scaled_dot_score
from attention_to_bert.checks.ch02 import han_attention
from attention_to_bert.checks.ch03 import attention_step
from attention_to_bert.checks.ch04 import positional_encoding, self_attention
from attention_to_bert.checks.ch05 import causal_mask, split_heads
from attention_to_bert.checks.ch06 import label_smoothed_cross_entropy, noam_schedule
from attention_to_bert.checks.ch07 import mlm_mask
from attention_to_bert.checks.checker import Checker
