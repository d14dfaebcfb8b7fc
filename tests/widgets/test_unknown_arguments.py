"""Widgets refuse keyword arguments they do not know (traitlets only warns, hidden, and drops
them), naming the close match."""

from __future__ import annotations

import pandas as pd
import pytest

import tfprof_nb as tp


def test_a_view_refuses_a_typo_and_names_the_trait(gpu_fixture_file):
    prof = tp.load(gpu_fixture_file)
    with pytest.raises(TypeError, match=r"OverviewView\(\) got an unexpected keyword argument "
                                        r"'eror'; did you mean 'error'\?"):
        tp.widgets.OverviewView(prof, eror="x")
    assert tp.widgets.OverviewView(prof, error="shown").error == "shown"  # a real trait works


def test_a_widget_names_its_own_arguments_and_says_nothing_when_none_is_close():
    df = pd.DataFrame({"x": [1, 2]})
    with pytest.raises(TypeError, match="'titel'; did you mean 'title'"):
        tp.widgets.TableView(df, titel="t")
    with pytest.raises(TypeError) as info:
        tp.widgets.TableView(df, zzz=1)
    assert str(info.value) == "TableView() got an unexpected keyword argument 'zzz'"
    view = tp.widgets.TableView(df, title="t", layout={"width": "300px"})  # ipywidgets' own
    assert view.layout.width == "300px"
