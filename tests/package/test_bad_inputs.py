"""The package's bad-input audit, ``tests/package/bad_inputs.py``, as tests: every bad call raises a
TypeError or ValueError whose message names the argument, every valid one (an empty batch, a NaN at
a masked key, a model's mode after an error, ...) gets the right answer; and the audit calls every
public function and class of the package (but the checkers' and the argument checks themselves)."""

import importlib
import inspect
import pkgutil
import re

import bad_inputs
import pytest

import attention_to_bert


@pytest.mark.parametrize(
    "kind, argument, call",
    [case[1:] for case in bad_inputs.CASES],
    ids=[case[0] for case in bad_inputs.CASES],
)
def test_bad_input_gets_a_clear_error_and_valid_input_the_right_answer(kind, argument, call):
    category, detail = bad_inputs.classify(kind, argument, call)
    assert category == ("clear error" if kind == "bad" else "ok"), detail


def public_names() -> list[str]:
    """``module.name`` and ``module.Class.method`` of every public function, class and method."""
    names = []
    for info in pkgutil.walk_packages(attention_to_bert.__path__, "attention_to_bert."):
        if ".checks" in info.name or info.name.endswith(".validate"):
            continue
        module = importlib.import_module(info.name)
        short = info.name.rsplit(".", 1)[1]
        for name, value in vars(module).items():
            if name.startswith("_") or getattr(value, "__module__", None) != module.__name__:
                continue
            if inspect.isfunction(value) or inspect.isclass(value):
                names.append(f"{short}.{name}")
            if inspect.isclass(value):
                names += [
                    f"{short}.{name}.{method}"
                    for method, member in vars(value).items()
                    if not method.startswith("_")
                    and method not in ("forward", "extra_repr")
                    and (inspect.isfunction(member) or isinstance(member, classmethod))
                ]
    return names


def test_the_audit_calls_every_public_function():
    words = {w for case in bad_inputs.CASES for w in re.findall(r"[A-Za-z_][\w.]*", case[0])}
    missing = [
        name
        for name in public_names()
        if name not in bad_inputs.NOT_COVERED
        and name.split(".", 1)[1] not in words
        and name not in words
    ]
    assert not missing, f"no probe in tests/package/bad_inputs.py calls {missing}"
