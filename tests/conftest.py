"""The `tff` and `slow` markers of the test suite, and the fast lane.

`make check` runs `pytest -m "not slow and not tff"` (the fast lane), and
`make test` runs everything. The markers are given here, by module and by
measured duration, so test bodies carry none; docs/testing.md has the rules
and the measurement the lists come from.

- `tff`: the test imports TensorFlow or TensorFlow Federated, in process or
  in a child process, or starts a TFF worker (the modules of _TFF_MODULES and
  the tests of _TFF_TESTS).
- `slow`: the test runs an experiment driver in a subprocess (its module
  imports tests/experiments/drivers.py), fuzzes (a `*_fuzz_test.py` module),
  or took over 0.5 s in the reference measurement (_SLOW_TESTS).

The modules of _TFF_MODULES import TensorFlow Federated when they are
imported (tests/engines/tff/worker_test.py only starts workers), which alone
costs 15-30 s. When the `-m` expression leaves out every `tff` test, they are
not collected at all (pytest_ignore_collect).

`make test` and `make check` run the tests on every core with pytest-xdist
(`-n logical --dist loadgroup`). Tests that share work done once per
process, a fixture wider than a test or a unittest setUpClass, get an
`xdist_group` marker here (_shared_work), so that one worker does it once.

The session's caches (built populations, calibrations, the TFF worker's
loopback wrapper) go to a directory of its own, made empty when the session
starts and shared by its workers and the drivers they start
(`XDG_CACHE_HOME`): a run of the suite starts as cold as a fresh machine and
never reads or writes the user's cache.

The suite writes Python bytecode (the ``__pycache__`` directories git
ignores) even where ``PYTHONDONTWRITEBYTECODE`` is set: the workers, and the
driver and TFF worker processes they start, import the same few hundred
project and test modules, and without it every process compiles them again
from source (2.4 s of each worker's collection; docs/testing.md).
"""

from __future__ import annotations

import atexit
import gc
import hashlib
import inspect
import os
import pathlib
import random
import re
import shutil
import sys
import tempfile

from numpy.random import bit_generator
import pytest

_ROOT = pathlib.Path(__file__).parent.parent

# Module paths (a prefix ending in "/" is a directory) whose every test is
# `tff`: the modules that import TFF at import time, and the TFF worker's.
_TFF_MODULES = (
    "tests/engines/tff/",
    "tests/baselines/iblt_test.py",
    "tests/experiments/run_triehh_tff_test.py",
)

# Tests elsewhere that import TFF in their body.
_TFF_TESTS = (
    "tests/runs/grid_test.py::test_an_iblt_cell_that_would_not_fit_in_memory_is_refused",
    "tests/experiments/sweep_test.py::test_iblt_cells_run_resume_and_summarize",
    "tests/experiments/run_mechanisms_test.py::test_iblt_runs_on_tff_as_the_library_runs_it",
    "tests/docs/tutorial_test.py::test_the_notebook_runs_top_to_bottom",
)

# Tests that took over 0.5 s (setup, call and teardown) in the reference
# measurement (docs/testing.md), besides the driver and fuzz modules, which
# are slow as a whole. Keys are module paths; values name a test, a test
# class, or a test function whose parametrized cases (`name[...]`) all count.
# The comment is the longest measured time.
_SLOW_TESTS = {
    "tests/theory/noisy_trie_test.py": (
        "test_rounds_of_different_noise_compose[2.0-multipliers2-4-1e-06]",  # 6.5 s wall at 12
        "test_without_sampling_epsilon_meets_delta_past_the_pld[1e-18]",  # 5 s wall
        "test_without_sampling_epsilon_meets_the_exact_discrete_composition[2.0-4-1e-06]",  # 4.6 s wall
        "test_subsampled_discrete_gaussian_matches_a_direct_composition[3.0-0.5-11-1e-12]",  # 4 s wall
        "test_calibration_with_multipliers_meets_the_target_tightly",  # 12 s wall
        "test_a_huge_epsilon_stops_at_the_least_sigma",  # 6.3 s
        "test_calibration_picks_the_rate_with_the_smallest_count",  # 3.9 s
        "test_calibration_meets_the_target_with_the_smallest_sigma",  # 0.8 s
        "test_sampling_amplifies",  # 0.5 s
    ),
    "tests/theory/calibration_table_test.py": (
        "test_every_rate_is_private_and_the_largest",  # 2.6 s
        "test_entries_are_the_searchs_answers",  # 0.5-0.8 s each
        "test_an_entry_the_accountant_refuses_is_searched",  # 1.5 s wall
    ),
    "tests/conftest_test.py": (
        # 6 s by design (a worker's end slower than execnet's 5 s).
        "test_a_worker_slow_to_collect_its_garbage_ends_without_a_traceback",
    ),
    "tests/docs/tutorial_test.py": (
        "test_the_notebook_runs_top_to_bottom",  # 27 s at a load of 3
    ),
    "tests/core/extras_test.py": (  # the core in a child process
        "test_the_core_runs_without_tensorflow_beam_or_jax",  # 17 s at 10
        "test_asking_for_an_extra_names_it_in_one_line",  # 3 s
    ),
    "tests/api_test.py": (
        "test_unknown_engine_fails_without_importing_tensorflow",  # 2.1 s
        "DiscoverTest::test_bad_arguments_bad_cap",  # 1.5 s
        "DiscoverTest::test_bad_arguments_epsilon_below_the_grid_poisson",  # 0.5 s
        "DiscoverTest::test_calibrated_run_reports_its_guarantee",  # 1.6 s
        "DiscoverTest::test_cap_is_refused_or_run_without_guarantee",  # 2.3 s
        "DiscoverTest::test_default_sampling_batch_size",  # 0.9 s
        "DiscoverTest::test_several_words_per_user",  # 2.9 s
        "DiscoverTest::test_theta_and_gamma_directly",  # 0.7 s
    ),
    "tests/discovery/availability_test.py": (
        "test_discover_availability_argument",  # 0.9 s
        "test_everyone_online_has_discovers_parameters",  # 2.0 s
        "test_fraction_recalibrated_to_the_online_count",  # 0.5 s
        "test_nominal_calibration_reports_the_larger_epsilon",  # 1.0 s
        "test_same_seed_same_result",  # 2.5 s
    ),
    "tests/baselines/iblt_test.py": (
        "test_batch_size_from_epsilon_is_triehh_batch_size",  # 1.0 s
        "test_batch_size_from_epsilon_is_triehh_batch_size_on_several_words",  # 0.6 s
        "test_disjoint_passes_cover_every_user_once",  # 1.2 s
        "test_exact_counts_of_the_sampled_users_at_k1",  # 9.9 s
        "test_first_round_has_triehh_first_round_votes",  # 0.9 s
        "test_sampled_rounds_follow_triehh_rounds",  # 0.9 s
        "test_secure_sum_gives_the_plain_sum_result",  # 3.7 s
        "test_truncated_outputs_are_counted",  # 0.8 s
        "test_words_below_k_are_not_released",  # 3.6 s
    ),
    "tests/baselines/sfp_test.py": (
        "DeterminismTest",  # 1.0 s
        "ParamsTest::test_params_and_defaults",  # 0.8 s
    ),
    "tests/beam/ingest_test.py": (  # each runs a Beam pipeline: 2-5 s
        "test_a_rerun_touches_only_the_files_it_wrote",  # 29 s wall
        "test_a_full_disk_names_the_folder_and_leaves_the_earlier_one",  # 18 s wall
        "test_a_second_ingestion_into_a_held_folder_is_refused",  # 14 s wall
        "test_a_failed_ingestion_leaves_the_earlier_one_whole",
        "test_csv_shards_equal_the_concatenated_file",
        "test_other_formats_equal_the_concatenated_file",
        "test_a_user_across_shards_is_one_user",
        "test_one_file_cut_into_pieces_equals_the_file",
        "test_a_piece_with_no_usable_row_is_named",
        "test_importing_triehh_and_the_tables_does_not_import_beam",
        "test_sigterm_removes_the_staging_directory",  # 3.7 s, a child
        "test_an_out_of_memory_shard_is_named_with_its_size",  # 1.4 s, Beam
    ),
    "tests/beam/noisy_protocol_test.py": (  # each runs a Beam pipeline: 1-3 s
        "test_the_rounds_are_equal_in_law_to_the_fast_engine",  # 4 s (fixture)
        "test_the_law_test_sees_a_threshold_a_third_of_sigma_higher",  # 2 s
        "test_the_stats_count_what_the_rounds_saw",  # the fixture
        "test_two_characters_per_round_are_equal_in_law_to_the_fast_engine",
        "test_quiet_noise_at_two_characters_per_round_finds_every_word",
        "test_each_round_runs_at_its_own_noise_and_threshold",
        "test_a_seed_gives_one_run_and_another_seed_another",
        "test_the_guarantee_is_the_fast_engines",
    ),
    "tests/beam/partition_selection_test.py": (
        "test_beam_backend_releases_what_the_local_backend_releases",  # 4 s
        "test_both_run_on_the_same_user_pcollection",  # 5 s
    ),
    "tests/beam/protocol_test.py": (
        "test_users_are_checked_one_word_each",  # a pipeline each: 1-2 s
        "test_everyone_sampled_gives_the_fast_engines_trie",  # 5 s
        "test_discovered_sets_match_the_fast_engine",  # 20 s (the fixture)
        "test_first_round_votes_match_the_fast_engine",
        "test_the_keyed_hash_samples_each_user_and_level_independently",
        "test_numpy_seeds_and_user_ids_run_as_python_ints",  # 2.5 s, Beam
    ),
    "tests/data/loader_test.py": (
        "test_sentiment140_sample_single_word_head",  # 1.4 s
        "test_a_cache_write_that_fails_leaves_no_stray_traceback",  # 1.0 s
    ),
    "tests/data/paper_populations_test.py": (
        "test_shipped_single_population_has_the_published_head",  # 1.2 s
        "test_shipped_table_is_what_the_tool_makes_from_the_sample",  # 2.0 s
        "test_word_counts_from_file_by_hand",  # 1.1 s
        "test_wordfreq_tail_of_oov_is_outside_the_dictionary",  # 2.5 s
        "test_other_tails_keep_the_published_head",  # 2.0 s
        "test_the_tail_is_a_data_option_only_when_not_the_default",  # 1.5 s
    ),
    "tests/data/tokenize_test.py": (
        "test_sample_matches_the_reference",  # 3.9 s
    ),
    "tests/checks/audit_several_words_test.py": (
        "test_exact_law_matches_the_engine",  # 2.9 s at a load of 12
        "test_exact_law_equals_brute_force_enumeration",  # 0.5 s, imports
    ),
    "tests/reports/reproduction/markdown_test.py": (
        "test_the_epsilon_1_row_computes_the_threshold_share",  # 3.4 s
        "test_beyond_the_paper_several_words_delta_beside_the_papers",  # 4.0 s
    ),
    "tests/reports/field_test.py": (
        # Their module fixture runs and reports the whole field grid: 8.6 s
        # of CPU (25 s wall at a load of 5).
        "test_every_mechanism_is_a_cell_with_its_seeds",
        "test_report_has_every_row_and_the_moonshot",
        "test_guarantee_labels_name_directions_and_adjacencies",
        "test_a_second_invocation_runs_nothing",
        "test_the_planned_noisy_trie_records_its_upload_within_the_budget",  # 8 s
    ),
    "tests/reports/reproduction/sfp_limits_test.py": (
        # Each re-runs SFP on 6.8 million users.
        "test_padded_slots_rerun_the_record_and_count_the_pad_pairs",  # 1.9 s
        "test_with_a_slot_for_every_bucket_the_long_words_are_found",  # 0.6 s
        "test_padded_slots_refuse_a_record_the_rerun_does_not_match",  # 0.6 s
        "test_the_padding_note_prints_slots_and_lengths_never_found",  # 0.6 s
    ),
    "tests/reports/reproduction/ablations_test.py": (
        "test_the_caveat_is_proposition_2_at_small_n",  # 1.2 s
    ),
    "tests/runs/algorithms_test.py": (
        "test_triehh_cells_with_counts_differ_by_share_and_record_the_total",  # 7 s
    ),
    "tests/experiments/counts_flags_test.py": (
        "test_run_triehh_prints_and_records_the_protected_counts",  # 5 s
        "test_a_sweep_over_count_shares_is_summarized_per_share",  # 10 s
    ),
    "tests/reports/beyond_test.py": (
        "test_the_counts_figure_is_drawn",  # 1 s
    ),
    "tests/secure/protocol_test.py": (
        # 200 runs of the protocol and of the fast engine each: 5-20 s.
        "test_the_protocol_and_the_fast_engine_are_equal_in_law",
        "test_the_law_test_sees_a_wrong_threshold_or_noise_scale",
    ),
    "tests/secure/loopback_test.py": (  # two server processes: 0.7-2.5 s
        "test_the_processes_release_what_the_in_process_walk_releases",
        "test_a_server_that_dies_is_named_in_one_line_and_both_end",
        "test_a_step_refused_by_a_server_keeps_the_steps_released_before",
    ),
    "tests/discovery/counts_test.py": (
        "test_intervals_cover_at_their_nominal_rate",  # 30-42 s wall each
        "test_a_tiny_epsilon_or_rate_is_calibrated",  # 0.8 s
        "test_a_huge_total_epsilon_with_discovery_stops_at_the_least_sigma",  # 0.7 s
        "test_discover_with_counts_reports_the_total_and_each_phase",  # 2.5 s
        "test_several_word_intervals_cover_the_population_frequency",  # 0.7 s
        "test_a_huge_epsilon_stops_at_the_least_sigma",  # 0.5 s
    ),
    "tests/data/datasets_test.py": (
        "test_the_default_population_is_cached_and_read_back_identical",  # 1.1 s
    ),
    "tests/theory/counting_exact_test.py": (
        "test_fixed_discovery_and_counting_meet_the_reported_total",  # 1.9 s
        "test_poisson_discovery_and_counting_meet_the_reported_total",  # 2.8 s
        "test_counting_alone_meets_its_delta_tightly",  # 0.6 s
    ),
    "tests/theory/counting_test.py": (
        "test_a_negligible_counting_phase_leaves_discovery_epsilon",  # 5.7 s wall at 12
        "test_the_direct_epsilon_is_the_least_the_direct_sum_allows",  # 50 s wall
        "test_calibrate_noise_to_total_meets_the_total_tightly",  # 4.1 s
        "test_repeated_accounting_with_equal_arguments_is_cached",  # 2.1 s
        "test_calibrate_total_is_compose_at_the_calibrated_sigma",  # 2.0 s
        "test_calibrate_noise_is_tight",  # 3.1 s
        "test_calibrate_noise_is_monotone",  # 0.8 s
        "test_total_is_at_most_requested_with_fixed_discovery",  # 1.4 s
        "test_total_is_at_most_requested_with_poisson_discovery",  # 1.2 s
        "test_exact_gaussian_sigma_alone_is_the_analytic_gaussian",  # 4.2 s
    ),
    "tests/discovery/deny_list_test.py": (
        "test_discover_deny_list_argument",  # 0.52 s
    ),
    "tests/engines/fast_test.py": (
        "test_same_seed_same_result_and_sub_rounds_change_nothing",  # 19 s wall at 12
        "test_full_sample_and_threshold_one_discovers_every_short_word",  # 15 s wall
        "test_a_trillion_users_from_word_frequencies",  # 5.1 s
        "test_different_seeds_differ",  # 2.6 s
        "test_discovery_rate_matches_proposition_2",  # 1.3 s
        "test_engine_equals_the_naive_reference",  # 1.0 s
        "test_every_prefix_passed_the_threshold_and_has_its_parent",  # 0.6 s
        "test_first_round_votes_are_hypergeometric",  # 2.7 s
        "test_poisson_sampling_equals_the_naive_reference",  # 0.9 s
        "test_population_is_freed_after_a_run",  # 1.8 s
    ),
    "tests/engines/tff/computations_test.py": (
        "test_process_initializes_the_root_and_runs_a_level",  # 0.6 s
        "test_server_update_grows_the_trie_exactly_like_trie_grow",  # 0.7 s
        "test_top_words_client_votes_with_its_most_frequent_words",  # 0.6 s
    ),
    "tests/engines/tff/engine_test.py": (
        "test_clients_of_a_round_are_distinct_users_of_its_cells",  # 0.6 s
        "test_fixed_vote_capacity_gives_the_same_trie_and_is_checked",  # 0.6 s
        "test_paper_worked_example_through_discover",  # 1.2 s
        "test_poisson_sampling_gives_the_same_trie",  # 1.6 s
        "test_random_small_populations_match",  # 3.6 s
        "test_same_trie_as_the_fast_engine",  # 1.8 s
        "test_secure_sum_gives_the_same_trie",  # 1.9 s
        "test_several_votes_per_user_need_allow_no_guarantee",  # 1.8 s
        "test_top_words_mode_matches_its_reference",  # 2.4 s
    ),
    "tests/engines/tff/runtime_test.py": (
        "test_a_hung_worker_is_named_after_the_call_deadline",  # 6.6 s
        "test_a_crashed_local_worker_is_replaced_by_the_next_lookup",  # 2.6 s
        "test_a_closed_runtime_refuses_calls_at_once",  # 1.5 s
        "test_a_worker_that_dies_is_named_and_the_run_stops",  # 8.4 s
        "test_two_loopback_workers_give_the_single_process_trie",  # 10.0 s
        "test_unreachable_worker_is_named_within_the_connect_timeout",  # 1.0 s
    ),
    "tests/engines/tff/worker_test.py": (
        "test_command_line_refuses_a_port_in_use_in_one_line",  # 1.5 s
        "test_command_line_starts_a_worker_and_rejects_bad_flags",  # 6.2 s
        "test_the_worker_runs_without_onednn_unless_the_caller_asks",  # 1.4 s
        "test_worker_serves_on_loopback_only_unless_asked",  # 2.6 s
    ),
    "tests/engines/compiled_draws_test.py": (
        "test_the_same_counts_and_stream_as_numpy",  # 1.0 s
    ),
    "tests/engines/vote_counts_test.py": (
        "test_runs_discover_what_user_level_runs_discover",  # 1.1 s
        "test_votes_match_user_level_sampling_over_many_seeds",  # 1.6 s
        "test_count_rounds_are_the_general_rounds",  # 0.6 s
        "test_two_stage_sample_is_a_uniform_subset_of_users",  # 0.5 s
    ),
    "tests/discovery/passes_test.py": (
        "test_one_pass_is_discover",  # 2.5 s
    ),
    "tests/theory/policy_test.py": (
        "PoissonTest::test_calibrated",  # 2.5 s
        "ResolveParamsTest::test_theta_and_gamma_get_theorem11",  # 1.1 s
        "AdjacencyTest::test_replace_one_has_its_own_accountant",  # 2.4 s wall
    ),
    "tests/checks/audit_test.py": (
        "test_engine_matches_exact_depth_distribution",  # 0.53 s
        "test_monte_carlo_lower_bound_within_theorem",  # 0.9 s
        "test_planned_populations_include_threshold_sizes",  # 0.52 s
        "test_theta_one_caught_by_monte_carlo",  # 1.7 s
    ),
    "tests/core/ranking_test.py": (
        "test_top_words_is_the_head_of_the_full_ranking",  # 0.6 s
        "test_ranked_counts_serve_any_sequence_of_k_as_top_words",  # 2.1 s wall
    ),
    "tests/reports/reproduction/two_sided_test.py": (
        "test_the_poisson_calibrations_meet_their_target",  # 0.8 s
        "test_the_section_leaves_the_papers_report_and_figures_as_they_were",  # 2.6 s
        "test_the_table_rows_are_the_two_calibrations",  # 2.8 s
    ),
    "tests/runs/grid_test.py": (
        "test_an_iblt_cell_that_would_not_fit_in_memory_is_refused",  # 3.4 s
    ),
    "tests/runs/runner_test.py": (
        "test_poisson_cells_record_their_sampling_and_keep_fixed_keys",  # 2.0 s
        "test_an_interrupted_plan_counts_every_line_it_wrote",  # 5.4 s (its driver processes)
    ),
    "tests/theory/exact_test.py": (
        "BruteForceTest::test_matches_brute_force17",  # 0.6 s
        "EngineAgreementTest",  # 0.7 s
        "BruteForceTest::test_matches_brute_force27",  # 0.6 s
        "BruteForceTest::test_random_cases_are_not_trivial",  # 1.6 s wall
        "BruteForceTest::test_matches_brute_force9",  # 1.4 s wall
    ),
    "tests/checks/exact_validation_test.py": (
        "CheckCanFailTest::test_rate_divided_by_three_is_caught",  # 1.4 s
        "ClaimsHoldTest",  # 2.9 s
        "CoverageTest::test_divergences_are_not_trivial",  # 2.1 s
        "HelpersTest::test_float_laws_match_fractions",  # 1.2 s
        "HelpersTest::test_poisson_adjacencies_agree",  # 0.9 s
    ),
    "tests/theory/poisson_test.py": (
        "RunLossTest::test_the_searchs_delta_is_run_loss_delta_bit_for_bit",  # 4 s wall at 12
        "CalibrateTest",  # 3.0 s
        "LevelLossTest::test_dominates_every_pair_in_both_directions0",  # 0.9 s
        "LevelLossTest::test_dominates_every_pair_in_both_directions1",  # 0.9 s
        "LevelLossTest::test_dominates_every_pair_in_both_directions2",  # 0.9 s
        "LevelLossTest::test_dominates_every_pair_in_both_directions3",  # 0.7 s
        "RunLossTest::test_agrees_with_dp_accounting_above_its_floor0",  # 0.6 s
    ),
    "tests/theory/utility_test.py": (
        "DiscoveryRateTest::test_exact_at_a_million_users",  # 2.2 s
        "MinPopulationTest::test_agrees_with_what_discover_runs2",  # 1.0 s
        "MinPopulationTest::test_counting_characters_as_levels_was_too_few_users",  # 0.6 s
        "MinPopulationTest::test_poisson_discover_finds_the_word_as_often_as_predicted",  # 1.6 s
        "MinPopulationTest::test_discover_finds_the_word_as_often_as_predicted",  # 2.7 s wall
    ),
    "tests/engines/noisy_test.py": (
        "test_zero_vote_candidates_pass_at_the_false_positive_rate",  # 21 s wall
        "test_more_passing_candidates_than_memory_holds_are_refused",  # 6 s wall
        "test_same_seed_same_result_and_seeds_differ",  # 6 s wall
        "test_a_word_of_many_users_is_found_and_a_rare_one_is_not",  # 5 s wall
        "test_monte_carlo_privacy_loss_stays_below_the_claim",  # 5.0 s
        "test_planned_false_words_stay_near_the_stated_expectation",  # 3 s wall
        "test_verified_false_words_stay_near_the_stated_expectation",  # 2.4 s
        "test_planned_sampling_thins_the_votes_and_counts_expected_bytes",  # 0.6 s
    ),
    # The plan's choice runs six plans on the prior (1-10 s each, load 0).
    "tests/mechanisms/plan_choice_test.py": (
        "test_every_rule_and_rate_is_tried_and_the_best_is_chosen",  # 9.9 s
        "test_noise_binds_every_user_votes_and_bytes_bind_q_is_smaller",  # 6.4 s
        "test_a_given_rate_is_kept",  # 3.0 s
        "test_below_the_subsampled_accountants_delta_every_user_votes",  # 1.2 s
        "test_scores_are_the_engines_true_words_on_the_prior",  # 0.9 s
    ),
    "tests/reports/field/pool_test.py": (
        "test_two_workers_record_what_one_process_records",  # 23.6 s
    ),
    "tests/runs/algorithms/mechanism_test.py": (
        "test_a_planned_run_records_its_uploads_and_a_classic_one_none",  # 7.7 s
    ),
    "tests/theory/noisy_plan_test.py": (
        "test_first_round_fits_its_share_and_rounds_cover_every_length",  # 10 s wall at 12
        "test_characters_shrink_as_the_frontier_grows",  # 9 s wall at 12
        # each computes a plan's sigma (2-3 s wall under load)
        "test_the_plan_reads_no_population",
        "test_the_accountant_meets_the_target_and_agrees_with_an_independent_pld",
        "test_same_accountant_as_the_noisy_trie",
        "test_one_word_caps_follow_the_parent_count",
        "test_the_per_round_cap_binds",
        # Round three: single process at a load of 2-3.
        "test_block_moduli_are_the_caps_of_each_count",  # 1.5 s
        "test_the_prior_rule_chooses_within_its_options_and_budget",  # 1.4 s
        "test_the_prior_rule_does_no_worse_than_the_fixed_one_on_its_prior",  # 1.4 s
        "test_a_prior_plan_meets_its_target_by_an_independent_pld",  # 0.7 s
        "test_a_frontier_too_large_keeps_its_first_prefixes_within_budget",  # 0.6 s
        # Sampled plans: the subsampled accountant's sigma search.
        "test_sampling_lowers_sigma_and_is_accounted_with_amplification",  # 1.6 s
        "test_sampling_lets_a_round_grow_by_one_over_q",  # 1.5 s
    ),
    "tests/reports/plots_test.py": (
        "test_discovery_figure_holds_the_binned_rates",  # 3.7 s
        "test_one_epsilon_gives_points_with_error_bars",  # 1.8 s
        "test_figures_hold_the_means_and_intervals_of_the_records",  # 1.8 s (the fixture)
        "test_cost_figure_shows_what_the_records_hold",  # the same fixture
    ),
    "tests/mechanisms/noisy_trie_test.py": (
        "test_a_run_that_releases_no_word_says_the_holders_a_word_needs",  # 23 s wall
        "test_the_fast_distributed_run_is_labelled_with_its_skellam_shares",  # 1.8 s
        "test_a_distributed_run_exports_its_skellam_rounds_not_the_gaussian",  # 2 s
        "test_the_distributed_noise_reads_n_for_its_split",  # 7-9 s wall
        "test_the_noisy_trie_finds_the_frequent_words_and_labels_them",  # 2.4 s
        "test_a_registered_engine_runs_the_noisy_trie_through_the_registry",  # 1.2 s
        "test_what_the_noisy_trie_does_not_run_with_is_refused",  # 1.1 s
        "test_parameters_free_of_the_data_cover_add_or_remove",  # 1.1 s
    ),
    "tests/mechanisms/discover_test.py": (
        "test_without_a_seed_the_run_draws_fresh_entropy_and_says_so",  # 49 s wall at 12
        "test_runs_without_a_seed_differ_and_a_seed_repeats",  # 37 s wall
        "test_the_other_entry_points_draw_fresh_entropy_by_default",  # 17 s wall
        "test_a_runs_guarantee_with_counts_is_the_total_of_both_phases",  # 12 s wall
        "test_opted_in_the_run_says_its_delta_protects_nobody",  # 5 s wall
        "test_every_mechanism_returns_a_release_its_protocol_describes",  # 2.3 s
        "test_sfp_is_a_mechanism_its_release_labelled_as_its_plan",  # 1.4 s
        "test_distributed_noise_for_another_declared_size_is_refused",  # 1.3 s
        "test_the_dp_event_composes_to_the_runs_own_epsilon",  # 1.1 s
        "test_fixed_size_batches_for_another_declared_size_are_refused",  # 2.3 s wall
    ),
    "tests/reports/reproduction/style_test.py": (
        "test_the_summary_figures_keep_the_rules_and_name_the_ceiling",  # 1.9 s
        "test_the_field_figures_keep_the_rules",  # 1.5 s
        "test_the_beyond_figures_keep_the_rules",  # 1.4 s
        "test_the_papers_figures_keep_the_rules",  # 1.2 s
    ),
    "tests/core/word_votes_test.py": (
        "test_compiled_ranking_of_sorted_runs_is_the_two_numpy_sorts",  # 5 s wall
        "test_ranked_is_by_count_and_both_paths_build_it",  # 1.6 s
    ),
    "tests/theory/two_servers_test.py": (
        "test_gaussian_pld_bounds_the_direct_sum",  # 1.6 s
        "test_calibrated_sigma_is_tight",  # 0.5 s
    ),
    "tests/baselines/partition_selection_test.py": (
        "test_released_words_are_held_and_sorted",  # 1.4 s
    ),
    "tests/docs/python_blocks_test.py": (
        "test_the_blocks_run_and_show_what_they_print[docs/counts.md]",  # 10 s wall
        "test_the_blocks_run_and_show_what_they_print[docs/guide.md]",  # 5 s wall
        "test_the_blocks_run_and_show_what_they_print[docs/mechanisms.md]",  # 1.3 s
        "test_the_blocks_run_and_show_what_they_print[docs/sfp.md]",  # 1.8 s wall
    ),
    "tests/theory/hockey_stick_test.py": (
        "ComposedDeltaTest::test_is_the_full_compositions_gaussians",  # 1.1 s
        "ComposedDeltaTest::test_is_dp_accountings_direct_sum_gaussians",  # 0.9 s
    ),
    "tests/experiments/data_flags_test.py": (
        "test_file_dataset_in_each_setting",  # 8 s wall
        "test_triehh_runs_on_an_ingested_folder_as_on_its_file",  # 1.1 s
        "test_an_ingested_folder_is_read_at_its_setting_and_length",  # 0.9 s
    ),
    "tests/layout_test.py": (
        "test_every_function_is_short_or_says_why",  # 0.9 s
    ),
    "tests/library_messages_test.py": (
        "test_no_library_module_names_a_flag_in_a_message",  # 0.8 s
    ),
    "tests/core/discrete_noise_test.py": (
        "test_the_tail_draws_have_the_conditioned_pmf",  # 0.7 s
        "test_skellam_above_has_the_conditioned_pmf",  # 1.8 s
    ),
    "tests/core/safe_format_test.py": (
        "test_the_printed_rate_meets_the_target",  # 0.5 s
    ),
    "tests/baselines/count_mean_sketch_test.py": (
        "FrequencyOracleTest::test_moments_given_the_hash_family0",  # 0.5 s
    ),
    "tests/data/input_files_test.py": (
        "test_blanked_long_lines_matches_a_line_by_line_reference",  # 2.6 s wall
    ),
    "tests/theory/poisson_calibration_test.py": (
        "test_a_slow_calibration_says_what_it_does",  # 1.5 s wall
    ),
    "tests/theory/dp_events_test.py": (
        "test_a_run_reads_its_own_epsilon_in_dp_accountings_accountant",  # 1.3 s wall
    ),
    # Round two (docs/testing.md): wall times at a load of 12, about
    # 8 s of wall per s of CPU.
    "tests/engines/two_servers_test.py": (
        "test_shortcut_has_the_law_of_every_candidate",  # 100 s wall at 12
        "test_false_passes_average_the_budget",  # 57 s wall
    ),
    "tests/engines/counting_test.py": (
        "test_the_noise_is_the_discrete_gaussian",  # 40 s wall
        "test_noisy_counts_have_the_law_of_per_user_sampling_with_noise",  # 39 s wall
    ),
    "tests/experiments/cli_test.py": (
        "FlagFileTest::test_a_missing_flag_file_is_named_in_one_line",  # 9 s wall
        "test_the_help_of_a_driver_run_as_a_module_lists_its_shared_flags",  # 7 s wall
        "QuietLibrariesTest",  # 2.5-5 s wall each
    ),
    "tests/engines/sampling_test.py": (
        "test_sampled_users_are_distinct_and_uniform",  # 5 s wall
    ),
    "tests/theory/calibration_store_test.py": (
        "test_the_key_holds_every_argument_and_the_code",  # 4 s wall at 12
    ),
    # Round three: single process at a load of 2-3.
    "tests/theory/noisy_prior_test.py": (
        "test_the_simulated_run_tracks_the_engine_on_the_prior",  # 1.5 s
    ),
    "tests/theory/distributed_noise_test.py": (
        "test_the_plan_meets_its_target_from_public_values",  # 1.0 s
        "test_composed_rounds_are_the_convolved_losses",  # 0.5 s
    ),
    "tests/mechanisms/planned_noisy_trie_test.py": (
        "test_the_plan_is_the_one_computed_from_public_values_alone",  # 1.3 s
        "test_a_budget_runs_the_planned_trie_and_finds_the_frequent_words",  # 1.7 s
        "test_a_declared_n_covers_add_or_remove_and_n_from_data_does_not",  # 0.8 s
        "test_other_data_of_the_same_public_shape_gets_the_same_plan",  # 0.8 s
        "test_a_release_with_no_word_says_why",  # 0.8 s
    ),
}

_DRIVERS_MODULE = "tests.experiments.drivers"


def _module_path(path: pathlib.Path) -> str | None:
  """`path` relative to the repository root, with "/" separators."""
  try:
    return path.relative_to(_ROOT).as_posix()
  except ValueError:
    return None


def _test_id(item: pytest.Item) -> str:
  """The item's node id from the repository root, whatever the rootdir."""
  module = _module_path(item.path)
  if module is None:
    return item.nodeid
  _, sep, rest = item.nodeid.partition("::")
  return module + sep + rest


def _names(test_id: str, name: str) -> bool:
  """Whether `name` (a test, class or module id) covers the test `test_id`."""
  return test_id == name or (test_id.startswith(name)
                             and test_id[len(name)] in ":[")


def _is_tff_module(module: str) -> bool:
  return any(module == prefix or (prefix.endswith("/")
                                  and module.startswith(prefix))
             for prefix in _TFF_MODULES)


def _runs_drivers(item: pytest.Item) -> bool:
  """Whether the item's module imports tests/experiments/drivers.py."""
  drivers = sys.modules.get(_DRIVERS_MODULE)
  module = getattr(item, "module", None)
  return drivers is not None and module is not None and any(
      value is drivers for value in vars(module).values())


def _shared_work(item: pytest.Item) -> str | None:
  """The xdist group of a test that shares work with other tests, else None.

  A fixture wider than a test (module or session scope) that the suite
  defines is computed once per worker process: the tests using one defined
  in a test module share that module's group, those using one of a
  conftest.py its folder's ("tests/engines/tff/"). A unittest class with
  its own setUpClass is a group. Under `--dist loadgroup` a group runs on
  one worker, so its shared work is done once.
  """
  homes = set()
  info = getattr(item, "_fixtureinfo", None)
  for fixturedefs in (info.name2fixturedefs.values() if info else ()):
    fixturedef = fixturedefs[-1]
    if fixturedef.scope == "function":
      continue
    source = inspect.getsourcefile(fixturedef.func)
    home = _module_path(pathlib.Path(source)) if source else None
    if home is None or not home.startswith("tests/"):
      continue  # pytest's own (tmp_path_factory) or a plugin's
    homes.add(home[:-len("conftest.py")] if home.endswith("/conftest.py")
              else home)
  if homes:
    return min(homes, key=lambda home: (not home.endswith("/"), home))
  cls = getattr(item, "cls", None)
  for klass in (cls.__mro__ if cls is not None else ()):
    if ("setUpClass" in vars(klass)
        and klass.__module__.split(".")[0] == "tests"):
      return f"{_test_id(item).partition('::')[0]}::{klass.__name__}"
  return None


def pytest_configure(config: pytest.Config) -> None:
  """The session's cache directory (module docstring), made by the
  controller, before the workers start; they inherit it."""
  if hasattr(config, "workerinput"):  # a worker: the controller made it
    return
  cache = tempfile.mkdtemp(prefix="triehh-test-cache-")
  os.environ["XDG_CACHE_HOME"] = cache
  # Bytecode (module docstring): compiled once, read by every later process.
  os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
  # No "calibrating ..." progress lines on stderr, however loaded the
  # machine: tests compare drivers' stderr line by line (the progress tests
  # set it themselves).
  os.environ["TRIEHH_PROGRESS_AFTER"] = "inf"
  sys.dont_write_bytecode = False
  config.add_cleanup(lambda: shutil.rmtree(cache, ignore_errors=True))


@pytest.fixture(autouse=True)
def _fresh_entropy_from_the_test_id(request, monkeypatch):
  """Fresh entropy (a run without a seed) drawn from the test's id, not the
  OS: numpy's ``SeedSequence()`` reads ``bit_generator.randbits``, which
  here is a generator seeded by a hash of the test id. Each draw still
  differs from the one before, so tests of fresh runs see fresh draws, but
  a test that forgets a seed gets the same draws on every run and machine
  (a test that failed on 5 in 200 OS draws passed here and failed in CI).
  Driver subprocesses still read the OS; their tests pass ``--seed``."""
  digest = hashlib.sha256(request.node.nodeid.encode()).digest()
  source = random.Random(int.from_bytes(digest[:16], "little"))
  monkeypatch.setattr(bit_generator, "randbits", source.getrandbits)


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
  """A worker's last garbage collection, done before it tells the controller
  that it has finished; later collections skip what is left.

  pytest's end (its unraisable-exception check) runs ``gc.collect()`` after
  the worker has reported, and execnet gives the worker 5 s from then before
  it sends it SIGINT. In a worker that imported TensorFlow and ran hundreds
  of tests, that end took 3.8-4.5 s at a load near 2, most of it in the
  collection (still running 2.5 s in); under more load the SIGINT landed in
  a finaliser that the collection ran, and a ``KeyboardInterrupt``
  traceback (PytestUnraisableExceptionWarning) followed the last line of a
  passing run. Collected here (the session's fixtures are torn down by now)
  and then frozen, the objects left are not traversed again; finalisers
  that fail here are still reported. They are unfrozen at exit, where
  ``gc.get_objects()`` must see them (the TFF runtime's ``close_all``).
  """
  if hasattr(session.config, "workerinput"):
    gc.collect()
    gc.freeze()
    atexit.register(gc.unfreeze)  # before those registered earlier


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config,
                                   items: list[pytest.Item]) -> None:
  """Adds the `tff`, `slow` and `xdist_group` markers (before -m selects on
  them, and before xdist reads the groups)."""
  groups = config.pluginmanager.hasplugin("xdist")
  for item in items:
    group = _shared_work(item) if groups else None
    if group is not None:
      item.add_marker(pytest.mark.xdist_group(group))
    test_id = _test_id(item)
    module = test_id.partition("::")[0]
    if _is_tff_module(module) or any(_names(test_id, n) for n in _TFF_TESTS):
      item.add_marker(pytest.mark.tff)
    if (module.endswith("_fuzz_test.py") or _runs_drivers(item) or any(
        _names(test_id, f"{module}::{n}")
        for n in _SLOW_TESTS.get(module, ()))):
      item.add_marker(pytest.mark.slow)


# A -m expression: names joined by "and", "or", "not" and parentheses.
_TOKEN = re.compile(r"\s*(\(|\)|[^\s()]+)")


def _evaluate(expression: str, marks: frozenset[str]) -> bool | None:
  """Whether an item with `marks` matches `expression`.

  None if the expression uses more than names, "and", "or", "not" and
  parentheses (for example keyword arguments of a mark).
  """
  tokens = _TOKEN.findall(expression)
  position = 0

  def peek() -> str | None:
    return tokens[position] if position < len(tokens) else None

  def take() -> str:
    nonlocal position
    position += 1
    return tokens[position - 1]

  def either() -> bool:
    value = both()
    while peek() == "or":
      take()
      value = both() or value
    return value

  def both() -> bool:
    value = negation()
    while peek() == "and":
      take()
      value = negation() and value
    return value

  def negation() -> bool:
    token = peek()
    if token is None or token in (")", "and", "or"):
      raise ValueError(expression)
    take()
    if token == "not":
      return not negation()
    if token == "(":
      value = either()
      if peek() != ")":
        raise ValueError(expression)
      take()
      return value
    if not re.fullmatch(r"[\w.:/+\-\\]+", token):
      raise ValueError(expression)
    return token in marks

  try:
    value = either()
  except ValueError:
    return None
  return value if peek() is None else None


def _leaves_out_tff(config: pytest.Config) -> bool:
  """Whether the -m expression deselects every `tff` test, slow or not."""
  expression = config.getoption("markexpr", default="")
  if not expression:
    return False
  return all(_evaluate(expression, marks) is False
             for marks in (frozenset({"tff"}), frozenset({"tff", "slow"})))


def pytest_ignore_collect(collection_path: pathlib.Path,
                          config: pytest.Config) -> bool | None:
  """Skips importing the TFF modules when -m deselects their tests anyway."""
  module = _module_path(collection_path)
  if module is None:
    return None
  if collection_path.is_dir():
    module += "/"
  if _is_tff_module(module) and _leaves_out_tff(config):
    return True
  return None
