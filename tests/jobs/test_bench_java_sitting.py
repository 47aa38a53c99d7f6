"""jobs.bench.java_sitting: JBench's output read right, ratios oriented right."""
import pytest

from jobs.bench.java_sitting import FIGURES, arena_figures, main, parse_jbench, ratios

JBENCH = """\
JAVA fm_ticks_per_s 270118 games 90396 mean_len 23.9
JAVA copies_per_s 242062 (4.13 us/copy)
JAVA mcts_default_40ms median_iters 799 median_ms 34.04 n 120
JAVA mcts_run_depth12_40ms median_iters 547 median_ms 34.06 n 120
JAVA rhea_default_40ms median_iters 385 median_ms 34.09 n 120
JAVA mcts_default_200it median_iters 200 median_ms 5.52 n 120
JAVA rhea_default_200it median_iters 200 median_ms 14.38 n 120
"""


def test_parse_jbench_reads_each_figure_from_its_line():
    j = parse_jbench("startup noise\n" + JBENCH)
    assert j == {"ticks_per_s": 270118.0, "copies_per_s": 242062.0, "mcts_iters_per_40ms": 799.0,
                 "rhea_iters_per_40ms": 385.0, "mcts_200_decision_ms": 5.52, "rhea_200_decision_ms": 14.38}


def test_parse_jbench_names_a_missing_line():
    with pytest.raises(ValueError, match="copies_per_s"):
        parse_jbench("JAVA fm_ticks_per_s 1 games 2\n")


def test_ratios_are_arena_over_java_and_inverted_for_times():
    java = parse_jbench(JBENCH)
    bench = {"ticks_per_s": 2701180.0, "copies_per_s": 242062.0 * 3, "mcts_iters_per_40ms": 7990,
             "rhea_iters_per_40ms": 385 * 2, "ms_per_decision_mcts_200": 0.552, "rhea_ms_per_decision_200": 14.38 / 4,
             "cold_start_s": 20.0}
    arena = arena_figures(bench)
    table = ratios([(java, arena), (java, {**arena, "ticks_per_s": 270118.0 * 20})])
    assert set(table) == {f[0] for f in FIGURES}
    ticks = table["ticks_per_s"]
    assert (ticks["ratio_min"], ticks["ratio_max"], ticks["advantage"]) == (10.0, 20.0, 15.0)
    assert table["copies_per_s"]["advantage"] == 3.0
    assert table["mcts_200_decision_ms"]["advantage"] == 10.0  # Java's ms / Arena's ms: 10x faster
    assert table["rhea_200_decision_ms"]["advantage"] == 4.0
    assert table["rhea_200_decision_ms"]["rev"] == 14.38 and table["ticks_per_s"]["tree"] == 270118.0 * 15


def test_main_refuses_a_folder_without_the_harness(tmp_path, capsys):
    assert main(["--java-dir", str(tmp_path)]) == 2
    assert "jp" in capsys.readouterr().err
