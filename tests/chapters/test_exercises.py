"""Every chapter ends with exercises a teacher can use: conceptual, coding (with a checker), explore."""

import re

import nbformat
import pytest
from helpers import CHAPTERS

HEADING = re.compile(r"^### Exercise \d+\.\d+ \((conceptual|coding|explore)\)", re.MULTILINE)


def tagged(notebook, tag):
    return [cell for cell in notebook.cells if tag in cell.metadata.get("tags", [])]


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda path: path.stem)
def test_chapter_has_the_three_kinds_of_exercise_with_folded_solutions(path):
    notebook = nbformat.read(path, as_version=4)
    exercises = tagged(notebook, "exercise")
    kinds = {match.group(1) for cell in exercises for match in HEADING.finditer(cell.source)}
    assert len(exercises) >= 3 and kinds == {"conceptual", "coding", "explore"}, (path.name, kinds)
    solutions = tagged(notebook, "solution")
    assert solutions, f"{path.name} has no solutions"
    for cell in solutions:
        tags = cell.metadata.get("tags", [])
        if cell.cell_type == "markdown":  # HTML <details> folds on the website, in Lab and Colab
            source = cell.source.strip()
            assert source.startswith("<details>") and source.endswith("</details>"), (
                f"{path.name}: a written solution is not folded"
            )
        else:  # folded on the website, and collapsed in JupyterLab
            assert {"hide-input", "hide-cell"} & set(tags), (
                f"{path.name}: a code solution is not folded"
            )
            assert cell.metadata.get("jupyter", {}).get("source_hidden"), (
                f"{path.name}: a code solution is open in JupyterLab"
            )
    coding = [
        cell for cell in solutions if cell.cell_type == "code" and "# BEGIN SOLUTION" in cell.source
    ]
    assert coding, f"{path.name}: no coding solution with '# BEGIN SOLUTION' markers"
    assert any("checks." in cell.source for cell in coding), (
        f"{path.name}: no coding solution calls a checker"
    )
