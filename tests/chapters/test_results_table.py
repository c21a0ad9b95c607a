"""``experiments/results_table.py``: the table that ``ch04_partner.py`` and ``ch03_controls.py``
keep, joined from files or updated run by run."""

import json

from helpers import load_script


def test_runs_replace_their_own_rows_and_merges_join_files(tmp_path):
    table = load_script("experiments/results_table.py")
    out = tmp_path / "table.json"
    old = {"rows": [{"job": "a", "seed": 0, "x": 1}, {"job": "b", "seed": 0, "x": 2}]}
    out.write_text(json.dumps(old | {"torch": "0", "date": "then"}))
    rows_of = lambda job, seed: [{"job": job, "seed": seed, "x": 10 + seed}]  # noqa: E731
    table.update(out, None, "job", ["a"], [1, 0], rows_of, ("job", "seed"))
    written = json.loads(out.read_text())
    assert [(r["job"], r["seed"], r["x"]) for r in written["rows"]] == [
        ("a", 0, 10),
        ("a", 1, 11),
        ("b", 0, 2),
    ]
    assert written["date"] != "then"
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"rows": [{"job": "c", "seed": 0}], "torch": "9", "date": "d"}))
    joined = tmp_path / "joined.json"
    table.update(joined, [out, other], "job", [], [], rows_of, ("job", "seed"))
    merged = json.loads(joined.read_text())
    assert len(merged["rows"]) == 4 and (merged["torch"], merged["date"]) == ("9", "d")
