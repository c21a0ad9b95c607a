"""The chapter 8 checker accepts masked-LM scores at the chosen positions and catches typical
wrong ones."""

from attention_to_bert import checks


def right(hidden, labels, table, bias):
    chosen = labels != -100
    return hidden[chosen] @ table.T + bias, labels[chosen]


def every_position(hidden, labels, table, bias):
    return hidden @ table.T + bias, labels[labels != -100]


def inverted(hidden, labels, table, bias):
    chosen = labels == -100
    return hidden[chosen] @ table.T + bias, labels[labels != -100]


def no_bias(hidden, labels, table, bias):
    chosen = labels != -100
    return hidden[chosen] @ table.T, labels[chosen]


def all_labels(hidden, labels, table, bias):
    chosen = labels != -100
    return hidden[chosen] @ table.T + bias, labels


def in_place(hidden, labels, table, bias):
    chosen = labels != -100
    labels[~chosen] = 0
    return hidden[chosen] @ table.T + bias, labels[chosen]


def stub(hidden, labels, table, bias):
    return None


def test_accepts_the_right_answer(capsys):
    assert checks.masked_scores(right)
    assert "passes" in capsys.readouterr().out


def test_catches_typical_wrong_answers(capsys):
    expectations = {
        every_position: "scores at every position",
        inverted: "NOT chosen",
        no_bias: "bias b is missing",
        all_labels: "chosen positions only",
        in_place: "the input `labels` was modified in place",
        stub: "returned None",
    }
    for wrong, message in expectations.items():
        assert not checks.masked_scores(wrong), wrong.__name__
        assert message in capsys.readouterr().out, wrong.__name__
