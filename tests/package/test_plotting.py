import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch

from attention_to_bert.plotting import head_grid, heatmap


def test_heatmap_labels_both_axes_and_has_a_colour_bar():
    weights = torch.softmax(torch.randn(3, 4), dim=-1)
    ax = heatmap(weights, ["a", "b", "c", "d"], ["x", "y", "z"], title="weights")
    assert [t.get_text() for t in ax.get_xticklabels()] == ["a", "b", "c", "d"]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["x", "y", "z"]
    assert ax.get_title() == "weights"
    assert len(ax.figure.axes) == 2  # the heatmap and its colour bar
    np.testing.assert_allclose(ax.images[0].get_array(), weights.numpy(), rtol=1e-6)
    plt.close(ax.figure)


def test_heatmap_annotates_values_and_draws_into_a_given_axes():
    fig, ax = plt.subplots()
    returned = heatmap(np.eye(2), annotate=True, colorbar=False, ax=ax)
    assert returned is ax
    assert sorted(t.get_text() for t in ax.texts) == ["0.00", "0.00", "1.00", "1.00"]
    assert len(fig.axes) == 1
    plt.close(fig)


def test_heatmap_rejects_wrong_shapes_and_label_counts():
    with pytest.raises(ValueError, match=r"\(queries, keys\), got shape \(2, 3, 4\)"):
        heatmap(np.zeros((2, 3, 4)))
    with pytest.raises(ValueError, match="x_labels has 2 labels but the matrix has 3"):
        heatmap(np.zeros((2, 3)), ["a", "b"])
    with pytest.raises(ValueError, match="y_labels has 1 labels but the matrix has 2"):
        heatmap(np.zeros((2, 3)), ["a", "b", "c"], ["q"])


def test_head_grid_draws_one_panel_per_head_on_a_shared_scale():
    weights = torch.softmax(torch.randn(6, 3, 3), dim=-1)
    fig = head_grid(weights, list("abc"), list("abc"), ncols=4, title="six heads")
    images = [ax for ax in fig.axes if ax.images]
    assert len(images) == 6
    assert {ax.images[0].get_clim() for ax in images} == {(0.0, float(weights.max()))}
    assert [ax.get_title() for ax in images] == [f"head {i}" for i in range(6)]
    assert fig.get_suptitle() == "six heads"
    plt.close(fig)


def test_head_grid_rejects_bad_input():
    with pytest.raises(ValueError, match=r"\(heads, queries, keys\), got shape \(3, 3\)"):
        head_grid(np.zeros((3, 3)))
    with pytest.raises(ValueError, match="head_titles has 1 entries for 2 heads"):
        head_grid(np.zeros((2, 3, 3)), head_titles=["one"])
    with pytest.raises(ValueError, match="ncols"):
        head_grid(np.zeros((2, 3, 3)), ncols=0)
