"""The index of the known routes to a green check: the end-to-end tests that close each one.

`ROUTES` maps each route (a short quote of the rule it breaks) to the pytest node ids that cover it through
`rubric-gate action` (or `check`/`preview` where the bullet is about them): a real git repository,
the fake GitHub, the judges faked over HTTP. The tests live in the modules named for the boundary
they protect; the tests here keep the index from rotting (every node id names a test that exists
and is neither skipped nor an expected failure, in a tracked file).

`FAIL_FIRST` records, for a sample of routes, how each test was shown to fail: the fix disabled
by a temporary patch of the guard (never committed), the test run, the failure seen.
"""

from __future__ import annotations

import importlib
import subprocess

from tests.action.harness import CALIBRATION, ROOT, RUBRIC, VERDICTS

# -- the index ------------------------------------------------------------------------------------

R = "tests/action/test_trust_routes.py::"
E = "tests/action/test_trust_edges.py::"
ANS = "tests/action/test_recorded_answers.py::"
CACHE = "tests/action/test_cache_trust.py::"
EDITS = "tests/action/test_rubric_edits.py::"
EVENTS = "tests/action/test_events_and_reruns.py::"
JUDGED = "tests/action/test_judge_trust.py::"
LAB = "tests/action/test_labels.py::"
MERGE = "tests/action/test_merge_and_base_tip.py::"
OVR = "tests/action/test_override_and_approvals.py::"
PATHS = "tests/action/test_paths_and_globs.py::"
READ = "tests/action/test_reading_files.py::"
TEXT = "tests/action/test_inert_text.py::"
I17 = "tests/action/test_route_index.py::"  # this module: its own tests are the index's
SH = "tests/action/test_same_head.py::"
IN = "tests/action/test_integrity.py::"


ROUTES: dict[str, list[str]] = {
    "the override record another workflow posts on a new head": [
        EVENTS + "TestStandingResult::test_an_override_record_another_workflow_posted_on_a_new_head"],
    "Untrusted input (PR-scoped caches): the parsed-blob index that travels with the cache": [
        CACHE + "test_a_pr_scoped_cache_cannot_rewrite_the_base_record_through_the_blob_index"],
    "1. one YAML parser: the repair suggestions' check spans": [
        READ + "test_the_repair_suggestions_read_check_lines_through_the_one_reader"],
    "Invalid input is never overridden (a malformed calibration set or verdict file)": [
        READ + f"test_a_malformed_calibration_set_or_verdict_file_is_bad_input_the_override_does_not_cover[{n}]"
        for n in (CALIBRATION, VERDICTS)],
    # -- "Every route found, to close" --
    "Root mapping tagged `--- !rubric`": [R + "test_a_tag_on_the_root_mapping_is_refused_naming_its_line",
                                         R + "test_the_cli_refuses_yaml_tags_too"],
    "`calibration: !!binary ...` hides a repoint and a relabel": [R + "test_a_binary_tagged_calibration_path_is_refused"],
    "A rubric file replaced by a symlink whose target string is the base YAML": [
        R + "test_a_rubric_replaced_by_a_symlink_is_refused[git]",
        R + "test_a_rubric_replaced_by_a_symlink_is_refused[rest]",
        PATHS + "TestShallowCheckout::test_a_symlink_rubric_read_through_the_api"],
    "helper rubric with a lenient `task` ... (same run)": [
        E + "test_a_helper_rubrics_verdicts_are_not_reused_for_the_strict_rubric_in_the_same_run"],
    "helper rubric with a lenient `task` ... (later runs)": [
        E + "test_a_helper_rubrics_cached_verdicts_are_not_reused_by_a_later_run"],
    "helper rubric with a lenient `task` ... (the push warm-up on `main`)": [
        E + "test_the_push_warm_up_judges_each_rubric_under_its_own_task"],
    "Two PRs from one base each deleting one of a redundant pair": [
        R + "test_two_prs_deleting_each_of_a_redundant_pair_cannot_both_land",
        R + "test_deleting_a_rubric_is_gated_on_what_the_base_tip_gives_it",
        MERGE + "TestMergeQueue::test_two_queued_prs_each_deleting_one_of_a_redundant_pair"],
    "Override granted, then new pushes (deletions) stay overridden": [
        E + "test_an_override_does_not_cover_pushes_after_the_label"],
    "Override granted, then new pushes (relabels, changed answers) stay overridden": [
        OVR + "test_an_override_does_not_cover_a_relabel_or_a_changed_answer_pushed_after_it[relabel]",
        OVR + "test_an_override_does_not_cover_a_relabel_or_a_changed_answer_pushed_after_it[changed-answer]"],
    "a label removed and the payload still listing it (read the label's state from the API)": [
        E + "test_a_label_removed_since_the_payload_does_not_count"],
    "honour `unlabeled`": [E + "test_the_unlabeled_event_re_gates_without_the_override"],
    "Bind an override to the head SHA it was applied on": [
        E + "test_an_override_does_not_cover_pushes_after_the_label",
        E + "test_another_labels_event_leaves_the_heads_check_as_it_is",
        SH + "test_an_override_on_each_pr_with_the_head_turns_its_check_green"],
    "Fork PR, judge configured without a secret: PR-written verdicts 'catch' R1": [
        R + "test_pr_written_verdicts_cannot_share_the_catch_of_a_deleted_check[fork-keyless-judge-trusted]",
        R + "test_pr_written_verdicts_cannot_share_the_catch_of_a_deleted_check[fork-keyless-judge-untrusted]",
        R + "test_pr_written_verdicts_cannot_share_the_catch_of_a_deleted_check[fork-replay-trusted]",
        R + "test_pr_written_verdicts_cannot_share_the_catch_of_a_deleted_check[replay-trusted]"],
    "A judged PR that bumps a version and flips a recorded answer another rubric uses": [
        R + "test_a_judged_flip_of_an_answer_another_rubric_uses_is_not_excused",
        R + "test_a_judged_flip_is_not_excused_for_a_rubric_reading_it_under_another_task",
        R + "test_a_flipped_answer_the_judge_contradicts_is_not_excused",
        R + "test_a_judged_flip_is_excused_when_every_rubric_reading_it_shares_the_task"],
    "A PR deletes a recorded verdict line; the next PR fills it 'yes' and deletes the check": [
        R + "test_deleting_a_recorded_verdict_line_needs_the_override",
        R + "test_a_verdict_only_pr_filling_a_gap_of_a_base_check_needs_the_override",
        R + "test_a_refilled_verdict_line_does_not_excuse_deleting_its_check"],
    "`merge_group` passes ungated": [E + "test_a_merge_group_is_gated_like_a_pr",
                                     MERGE + "TestMergeQueue::test_a_merge_group_whose_ref_names_no_pr"],
    "a shallow checkout with more than 3,000 changed files gates 0 rubrics": [
        R + "test_a_shallow_checkout_with_over_3000_changed_files_fails_closed"],
    "A rubric under a directory whose name holds a newline": [
        R + "test_a_rubric_under_a_directory_named_with_a_newline_is_gated",
        PATHS + "test_a_rubric_under_a_directory_named_with_a_newline_is_gated_in_a_shallow_checkout"],
    "A PR green against `staging`, retargeted to `main`, keeps its green check": [
        E + "test_a_pr_retargeted_to_main_is_re_gated"],
    # -- "Smaller things found on the way" --
    "A torn last line in the cache's `audits.jsonl` turns every later run red": [
        READ + "test_a_torn_last_line_in_the_audit_store_does_not_turn_later_runs_red",
        "tests/repair/test_units.py::test_a_torn_last_audit_line_is_cut_before_the_next_append",
        "tests/repair/test_units.py::test_a_damaged_audit_cache_is_moved_aside"],
    "One bad byte in the batch journal: traceback, exit 1, no check run": [
        "tests/action/test_batch_e2e.py::test_a_bad_byte_in_the_batch_journal_is_moved_aside_and_the_run_recovers"],
    "`.rubric-gate/comment.md -> ../.git/config` left for the upload step": [
        E + "test_a_committed_comment_symlink_is_not_left_for_the_upload_step",
        PATHS + "TestWorkspaceFiles::test_the_output_dir_committed_as_a_symlink_to_the_git_dir"],
    "`verdict_cache: .rubric-gate/verdicts` is wiped every run": [
        E + "test_a_verdict_cache_inside_an_output_name_is_refused"],
    "A new rubric with its own `judge:` key makes unbounded calls (configured judge only)": [
        E + "test_a_new_rubrics_own_judge_key_is_not_used"],
    "the default `max_judge_calls` is finite (documented), per run": [
        JUDGED + "test_the_default_judge_call_budget_is_finite_and_refuses_before_the_first_call",
        E + "test_max_judge_calls_bounds_the_whole_run",
        "tests/action/test_gate_service.py::test_the_actions_call_budget_is_one_per_run",
        "tests/action/test_packaging.py::test_action_yml_inputs_and_defaults_agree_with_the_code"],
    "item ids `GH-1`, a 40-hex SHA, `$\\color{green}...$`, U+202E, backslash links render live": [
        "tests/action/test_comment_render.py::test_comment_renders_one_item_per_rejected_change_and_no_live_user_text",
        TEXT + "TestCommentText::test_an_item_id_is_inert_in_the_comment",
        "tests/report/test_markdown_gfm.py"],
    "Check text with `</ check>`, `< /check>`, zero-width or fullwidth variants escapes the fence": [
        *(JUDGED + f"test_a_check_text_that_closes_its_fence_reaches_the_judge_as_data[{i}]"
          for i in ("space-after", "space-before", "zero-width", "fullwidth", "soft-hyphen")),
        "tests/judges/test_units.py::test_no_spelling_of_a_closing_tag_escapes_the_fence"],
    "An unexpected exception exits 1: exit 3 for `check`": [
        "tests/judges/test_cli.py::test_an_unexpected_exception_in_check_exits_3_and_names_the_traceback_file"],
    "An unexpected exception exits 1: exit 3 for the action": [
        E + "test_an_unexpected_exception_in_the_action_exits_3_with_one_line"],
    "Untrusted input (PR-scoped caches) can only make the gate stricter (brief; found in this session)": [
        CACHE + "test_a_pr_scoped_cache_with_a_line_keyed_to_the_judge_cannot_excuse_a_deletion"],
    # -- "The design to build", where an item names a behaviour --
    "1. regular blob only (symlinks, submodules and other modes are input errors)": [
        R + "test_a_calibration_set_or_verdict_file_replaced_by_a_symlink_is_refused",
        *(PATHS + f"test_a_file_replaced_by_a_submodule_is_refused[{n}]" for n in (RUBRIC, CALIBRATION, VERDICTS)),
        PATHS + "test_a_symlink_alias_of_the_rubric_is_bad_input"],
    "1. YAML tags refused, exit 2 naming the line": [R + "test_a_tag_on_the_root_mapping_is_refused_naming_its_line",
                                                     R + "test_a_binary_tagged_calibration_path_is_refused"],
    "1. one YAML parser (no second `yaml.safe_load` anywhere)": [
        READ + "test_no_module_but_the_one_reader_parses_yaml", READ + "test_the_yaml_probe_sees_a_reader"],
    "1. Anchors/aliases keep their current limits": [READ + "test_an_alias_bomb_is_bad_input",
                                                     MERGE + "TestYamlAliasesAcrossTheMerge"],
    "2. a difference that no rule classifies is a finding too (fail closed)": [
        "tests/action/test_classified_diff.py::test_an_allowed_difference_passes_and_the_same_one_without_a_rule_blocks",
        "tests/action/test_classified_diff.py::test_a_verdict_field_no_rule_names_needs_the_override",
        LAB + "TestCalibrationIdentity::test_a_meta_field_changed_on_a_caught_item_then_a_deletion"],
    "2. allowed change (items added, a pure rename, a reorder) is recorded": [
        IN + "test_adding_labeled_items_is_allowed_and_reported",
        IN + "test_a_pure_rename_of_a_frozen_check_and_of_a_blamed_check_is_accepted"],
    "3. a catch counts as shared only on trusted verdicts": [
        R + "test_pr_written_verdicts_cannot_share_the_catch_of_a_deleted_check",
        R + "test_pr_verdicts_that_only_add_blame_still_reject",
        ANS + "test_a_verdict_keyed_as_the_configured_judge_cannot_share_a_catch",
        ANS + "test_a_keyed_verdict_with_the_judge_key_missing_cannot_share_a_catch"],
    "3. ... and for new items without verdicts": [EDITS + "test_items_a_pr_adds_without_verdicts_cannot_excuse_a_deletion"],
    "4. A verdict is keyed by judge, model, prompt, task, check text, item content, sample": [
        E + "test_a_helper_rubrics_verdicts_are_not_reused_for_the_strict_rubric_in_the_same_run",
        E + "test_a_helper_rubrics_cached_verdicts_are_not_reused_by_a_later_run",
        E + "test_the_push_warm_up_judges_each_rubric_under_its_own_task",
        "tests/verdicts/test_replay.py::test_a_verdict_is_keyed_by_the_task_it_was_judged_under",
        JUDGED + "test_verdicts_another_model_gave_are_not_reused_for_the_configured_one",
        ANS + "TestKeyedEvidence::test_keyed_later_samples_flip_a_majority",
        LAB + "TestItemsMainAddedSince::test_an_answer_for_the_content_main_rewrote_an_item_to",
        "tests/verdicts/test_replay.py::test_keyed_lookup_needs_judge_and_prompt_to_match",
        "tests/verdicts/test_replay.py::test_samples_replay_only_the_first_and_key_live_lookups"],
    "5. Gate the merge, not the branch": [R + "test_two_prs_deleting_each_of_a_redundant_pair_cannot_both_land",
                                         R + "test_a_check_id_the_pr_and_main_each_changed_differently_is_reported",
                                         MERGE + "TestCrissCrossHistory::test_a_head_that_drops_a_main_change_through_an_ours_merge"],
    "5. a retargeted PR is re-gated and the copy-paste workflow listens for it": [
        E + "test_a_pr_retargeted_to_main_is_re_gated",
        *(EVENTS + f"test_the_copy_paste_workflow_gates_retargets_label_removals_and_merge_queues[{s}]"
          for s in (".github/workflows/rubric-gate.yml", "src/rubric_gate/scaffold/files/rubric-gate.yml",
                    "docs/action.md"))],
    "6. the push warm-up judges as PRs do (panel, samples)": [
        E + "test_the_push_warm_up_judges_the_panel_and_samples_a_pr_uses"],
    "6. One gate service for `check` and the action; `action` does not import `cli`": [
        "tests/action/test_gate_service.py::test_check_and_the_action_decide_an_edit_alike_with_a_panel_and_samples",
        "tests/test_architecture.py::test_the_action_does_not_import_the_cli"],
}


# Routes known open at this commit: strict xfails (checked below to stay strict xfails until closed).
OPEN: dict[str, list[str]] = {
}


# How each sampled route was shown to fail with its fix disabled (a temporary, uncommitted patch of
# the guard; the test run; what failed).
# Each: the guard (file: the temporary change) -> the tests run with it, and what they did. The
# patches were scripted (one string replacement each, then `git checkout -- <file>`), run at 353e263
# and again on main a7defc5 with the same outcome unless said.
FAIL_FIRST: dict[str, str] = {
    "YAML tags refused": "sources/yaml_lines.py: `_refuse_tags` returns at once -> both tag tests fail (exit 2 "
                         "with PyYAML's own constructor error, not the refusal naming the line)",
    "regular blob only": "action/commits/sources.py: the mode check in `_read_file` off -> symlink rubric [git], symlink "
                         "verdict file and submodule rubric fail (the submodule still reads as an error: its blob "
                         "is missing; the test asserts the refusal)",
    "task in the verdict key": "verdicts/model.py: `task_hash` returns one constant -> the same-run and warm-up "
                               "helper tests fail (A accepted; 20 calls, not 35); the later-run one still passes "
                               "on main a7defc5 (a PR's run reads nothing `actions/cache` restored: a second guard)",
    "gate the merge on the base tip": "action/gating/gate_file.py: `_gate_on_tip` not called -> the redundant-pair test "
                                      "fails (PR 2 passes)",
    "override bound to its head": "action/github/override.py: `_attested`'s `head != pr.head_sha` refusal off (on "
                                  "a7defc5; before: the `granted_on_head` check) -> the deletion, relabel and "
                                  "changed-answer pushes after the label all pass (3 tests fail)",
    "label state read at run time": "action/github/override.py: the label read from the payload, not the API -> the "
                                    "removed-label re-run and the `unlabeled` run both pass (2 tests fail)",
    "untrusted catches withheld": "trust/evidence.py: `catches_withheld` returns the PR's verdicts as written -> "
                                  "all 4 variants fail (A accepted: fork keyless judge trusted/untrusted, replay, "
                                  "fork replay)",
    "a filled-in answer needs the override": "action/commits/snapshot/diff.py: ANSWER_FILLED given no answers -> the "
                                             "verdict-only fill passes (fails); the fill-and-delete PR still exits 2 "
                                             "(the merge base has no verdict for A on R1: a second guard)",
    "a removed answer needs the override": "action/commits/snapshot/diff.py: ANSWER_REMOVED given no answers -> the "
                                           "deleted-line PR passes (fails)",
    "merge_group gated": "action/event.py: `merge_group` dropped from GATED_EVENTS -> the group passes as a "
                         "quick no-op (fails)",
    "3,000 files fail closed": "action/commits/changed.py: the listed-vs-`changed_files` check off -> the shallow run "
                               "passes, the rubric edit past the cut ungated (fails)",
    "retarget re-gated": "action/event.py: every `edited` treated as changing nothing AND action/decide.py: "
                         "`standing_exit_code` repeats any last result -> the staging pass stands (fails). Either "
                         "guard alone keeps the test green (two guards: the retarget rule, and a pass never stands)",
    "newline in a directory name": "globs.py: `matches_any` refuses names with a newline (the old glob) -> the git and "
                                   "the shallow (API) tests both pass the PR, the rubric ungated (both fail)",
    "output dir cleaned first": "action/run.py: `clear_output_dir` not called -> the committed "
                                "`comment.md -> ../.git/config` symlink is left (fails)",
    "verdict_cache collision refused": "action/commits/workspace.py: the output-name loop empty -> "
                                       "`.rubric-gate/verdicts` accepted (fails)",
    "audit store tail repaired": "audit/store.py: `_repair_tail` not called -> the next append glues onto the torn "
                                 "line and a later run cannot load the audits (fails)",
    "check text normalised before fencing": "judges/prompt.py: the ASCII-only path for every text -> zero-width, "
                                            "fullwidth and soft-hyphen variants reach the judge as a second "
                                            "`</check>` (3 fail; `</ check>` in ASCII still fenced by the pattern)",
    "default judge budget finite": "action/config.py: `max_judge_calls` default empty (unbounded) -> the run "
                                   "judges instead of refusing (not exit 2; ~60 s of calls) (fails)",
    "the judge in the verdict key": "verdicts/store.py: a keyed lookup matches any judge of the prompt and task -> "
                                    "model b reuses a's 20 verdicts (fails)",
    "a PR's run reads nothing actions/cache restored": "action/gating/pull_request.py: `cache.distrust_restored(...)` not "
                                                        "called -> the planted keyed (B, R1) no shares A's catch, "
                                                        "exit 0 (fails)",
    "exit 3 for a crash": "errors.py: EXIT_CRASH = 1 -> the action's and `check`'s crash tests both fail (1 != 3)",
}


INDEX_TESTS = {"test_every_node_in_the_index_exists_and_is_not_an_expected_failure",
               "test_the_index_names_every_test_of_this_module", "test_every_file_in_the_index_is_tracked",
               "test_the_fail_first_sample_names_at_least_ten_guards", "test_every_open_route_is_a_strict_xfail"}


def _split(node: str) -> tuple[str, list[str], str | None]:
    path, _, rest = node.partition("::")
    parts = rest.split("::") if rest else []
    param = None
    if parts and "[" in parts[-1]:
        parts[-1], param = parts[-1].split("[", 1)
        param = param.removesuffix("]")
    return path, parts, param


def _param_ids(parametrize) -> list[str]:  # type: ignore[no-untyped-def]
    """The ids pytest gives a parametrize mark's values (strings here: their own text)."""
    values = parametrize.args[1]
    return list(parametrize.kwargs.get("ids") or [str(getattr(v, "values", (v,))[0]) for v in values])


def _marks(obj: object) -> list:
    return list(getattr(obj, "pytestmark", []))


def test_every_node_in_the_index_exists_and_is_not_an_expected_failure() -> None:
    for bullet, nodes in ROUTES.items():
        assert nodes, bullet
        for node in nodes:
            path, parts, param = _split(node)
            assert (ROOT / path).is_file(), node
            module = importlib.import_module(path.removesuffix(".py").replace("/", "."))
            marks = _marks(module)
            obj: object = module
            for name in parts:
                assert hasattr(obj, name), node
                obj = getattr(obj, name)
                marks += _marks(obj)
            assert not [m for m in marks if m.name in ("xfail", "skip")], node
            if parts and not param:
                assert callable(obj) or isinstance(obj, type), node
            if param is not None:
                (parametrize,) = [m for m in marks if m.name == "parametrize"][:1]
                values = parametrize.args[1]
                ids = _param_ids(parametrize)
                assert param in ids, (node, ids)
                value = values[list(ids).index(param)]
                assert not [m for m in getattr(value, "marks", ()) if m.name in ("xfail", "skip")], node


def _xfail_marks(node: str) -> list:
    path, parts, param = _split(node)
    obj: object = importlib.import_module(path.removesuffix(".py").replace("/", "."))
    marks = _marks(obj)
    for name in parts:
        obj = getattr(obj, name)
        marks += _marks(obj)
    if param is not None:
        (parametrize,) = [m for m in marks if m.name == "parametrize"][:1]
        values = parametrize.args[1]
        ids = _param_ids(parametrize)
        marks += list(getattr(values[list(ids).index(param)], "marks", ()))
    return [m for m in marks if m.name == "xfail"]


def test_every_open_route_is_a_strict_xfail() -> None:
    """When one is closed its strict xfail turns into a failure until its mark is removed; the
    node then belongs in ROUTES (a closed route with its mark removed still passes here, so that
    closing it elsewhere does not break this index)."""
    for bullet, nodes in OPEN.items():
        for node in nodes:
            assert all(m.kwargs.get("strict") for m in _xfail_marks(node)), (bullet, node)


def test_the_index_names_every_test_of_this_module() -> None:
    mine = {name for name in globals() if name.startswith("test_")} - INDEX_TESTS
    named = {_split(n)[1][0] for nodes in (*ROUTES.values(), *OPEN.values()) for n in nodes if n.startswith(I17)}
    assert mine == named


def test_every_file_in_the_index_is_tracked() -> None:
    """The index names files by their path in the repository: each is tracked, so a rename shows."""
    tracked = set(subprocess.run(["git", "ls-files", "tests"], cwd=ROOT, capture_output=True, text=True,
                                 check=True).stdout.splitlines())
    missing = {_split(n)[0] for nodes in ROUTES.values() for n in nodes} - tracked - {
        "tests/action/test_route_index.py"}
    assert not missing, missing


def test_the_fail_first_sample_names_at_least_ten_guards() -> None:
    assert len(FAIL_FIRST) >= 10 and all("->" in how for how in FAIL_FIRST.values())
