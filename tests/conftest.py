"""The test tiers: the tests named in LARGE are marked ``large``, left out of a plain run
(pyproject.toml's addopts) so that the README's test command takes a few minutes; CI runs them
(``pytest -m large``)."""

import pytest

# the largest tables of numbers, by test function (every parametrization of each): the
# random-program tester's fixed batches (first and second order, third order, SciPy), the corpus
# at second and third order, and the tables of rules at second
# and third order (derived tangents, norms, factorizations, SciPy, branches not taken,
# products). Every rule is checked at first order in the plain run (tests/rules'
# test_every_rule: each has a case in a table of central differences).
LARGE = {
    "tests/fuzz/test_fuzz.py::test_fixed_seed_batch",
    "tests/fuzz/test_fuzz.py::test_fixed_seed_batch_third_order",
    "tests/fuzz/test_fuzz.py::test_fixed_seed_batch_with_scipy",
    "tests/compiler/test_rule_code.py::test_third_order_through_rules_is_right_or_an_error",
    "tests/corpus/test_corpus.py::test_second_order_matches_finite_differences",
    "tests/corpus/test_corpus.py::test_third_order_matches_finite_differences",
    "tests/rules/test_derived_elementwise_linalg.py::test_elementwise_tangents_at_second_order",
    "tests/rules/test_derived_shape.py::test_forward_mode_and_second_order_match_central_differences",
    "tests/rules/test_derived_elementwise_linalg.py::test_linalg_helper_tangents_at_third_order",
    "tests/rules/test_derived_elementwise_linalg.py::test_product_tangents_at_second_order",
    "tests/rules/test_derived_elementwise_linalg.py::"
    "test_runtime_helper_tangents_at_second_and_third_order",
    "tests/rules/test_regressions_outside.py::test_norms_to_second_order",
    "tests/rules/test_linalg.py::test_svd_and_einsum_to_third_order",
    "tests/rules/test_linalg.py::test_decompositions_to_second_order",
    "tests/rules/test_linalg_factorizations.py::test_factorizations_to_second_order",
    "tests/rules/test_scipy_special.py::test_elementwise_to_second_order",
    "tests/rules/test_scipy_stats.py::test_new_distributions_to_second_order",
    "tests/rules/test_numpy_breadth.py::test_through_the_transformer_to_second_order",
    "tests/rules/test_branch_not_taken.py::test_second_order_of_the_branch_taken",
    "tests/compiler/test_zero_gradients.py::"
    "test_shape_rules_unused_on_the_path_taken_to_second_order",
    "tests/compiler/test_rule_code.py::test_second_order_through_rules",
    "tests/api/test_higher.py::test_third_derivatives_through_reverse_over_forward",
    "tests/api/test_third_order.py::test_third_order_sweep_of_product_rules",
    "tests/api/test_third_order.py::test_third_order_of_products_against_differences",
    "tests/compiler/test_sequences.py::test_a_list_grown_by_concatenation_in_a_loop_at_third_order",
    "tests/compiler/test_lists_mutated.py::test_lists_mutated_after_read_against_finite_differences",
    "tests/rules/test_shape.py::test_ravel_in_every_order_in_both_modes_and_at_second_order",
    "tests/rules/test_shape.py::test_reshape_in_every_order_in_both_modes_and_at_second_order",
    "tests/rules/test_scipy_linalg.py::test_to_second_order",
    "tests/rules/test_scipy_stats.py::test_to_second_order",
    "tests/rules/test_linalg.py::test_einsum_to_second_order",
    "tests/rules/test_linalg.py::test_decompositions_to_second_order_in_reverse",
    "tests/rules/test_regressions_outside.py::test_index_joins_in_both_modes_and_to_second_order",
    "tests/rules/test_fft.py::test_real_losses_through_ffts_to_second_order",
    "tests/rules/test_scipy_special.py::test_new_functions_to_second_order",
    "tests/rules/test_scipy_special.py::test_axis_functions_to_second_order",
    "tests/rules/test_derived_elementwise_linalg.py::test_container_helper_tangents_at_second_order",
    "tests/compiler/test_python_as_written.py::test_forms_at_third_order",
    "tests/compiler/test_dynamic_calls.py::test_forms_at_third_order",
    # the corpus on Dask arrays in forward mode (reverse mode is in the plain run), and the
    # Dask example on a cluster of worker processes with less memory than its data
    "tests/corpus/test_dask_corpus.py::test_forward_mode_on_dask",
    "tests/runtime/test_array_types.py::test_dask_example_with_data_larger_than_a_workers_memory",
}


@pytest.hookimpl(tryfirst=True)  # before -m selects by marker
def pytest_collection_modifyitems(config, items):
    found = set()
    for item in items:
        function = item.nodeid.split("[", 1)[0]
        if function in LARGE:
            item.add_marker(pytest.mark.large)
            found.add(function)
    # a renamed test would silently leave the tier: every name must be a test function of
    # its file, where that file is collected (a selection may leave the test itself out)
    modules = {item.nodeid.split("::", 1)[0]: getattr(item, "module", None) for item in items}
    missing = {name for name in LARGE - found
               if name.split("::", 1)[0] in modules and
               not hasattr(modules[name.split("::", 1)[0]], name.split("::", 1)[1])}
    if missing:
        raise pytest.UsageError(f"tests/conftest.py's LARGE names tests not found: {missing}")
