"""The table of rules the probe and the fuzzer hold servers to
(``mcpwire_adapters.testing.judge.RULES``): each rule's strength is the keyword of the sentence
it quotes, so a rule cannot be labelled stronger (or weaker) than its text; every check of the
probe names rules of the table; and a finding's status is its strongest rule's."""

from __future__ import annotations

import re

import pytest

from mcpwire_adapters.testing.judge import RULES, Expect
from mcpwire_adapters.testing.probe.runner import CHECKS
from mcpwire_adapters.testing.verdict import Finding, Outcome, Problem, status_of, visible

MUST_WORDS = re.compile(r"\b(MUST|MUST NOT|REQUIRED|SHALL|SHALL NOT)\b")
SHOULD_WORDS = re.compile(r"\b(SHOULD|SHOULD NOT|RECOMMENDED|NOT RECOMMENDED)\b")
OFFICIAL = ("MCP 2026-07-28", "MCP 2025-11-25", "MCP 2025-06-18", "MCP 2025-03-26", "MCP 2024-11-05", "JSON-RPC 2.0",
            "RFC 9110")


def test_every_rule_has_a_strength_a_source_a_quote_and_its_key() -> None:
    assert len(RULES) >= 40
    for key, rule in RULES.items():
        assert rule.id == key
        assert rule.strength in ("MUST", "SHOULD", "advice"), key
        assert rule.source in (*OFFICIAL, "mcpwire"), key
        assert len(rule.quote) > 20, key
        assert rule.url is None or rule.url.startswith("https://"), key


@pytest.mark.parametrize("key", sorted(RULES))
def test_the_strength_is_the_keyword_of_the_quoted_sentence(key: str) -> None:
    rule = RULES[key]
    if rule.strength == "MUST":
        assert MUST_WORDS.search(rule.quote), f"{key}: a MUST rule must quote MUST, MUST NOT, REQUIRED or SHALL"
        assert rule.source in OFFICIAL, f"{key}: only the official text makes a MUST"
    elif rule.strength == "SHOULD":
        assert SHOULD_WORDS.search(rule.quote), f"{key}: a SHOULD rule must quote SHOULD or RECOMMENDED"
        assert not MUST_WORDS.search(rule.quote), f"{key}: a sentence with MUST is not a SHOULD"
        assert rule.source in OFFICIAL, key
    else:
        assert not MUST_WORDS.search(rule.quote) and not SHOULD_WORDS.search(rule.quote), \
            f"{key}: advice quoting a requirement keyword is mislabelled"


def test_this_projects_conventions_are_advice_and_the_official_pages_are_linked() -> None:
    for key, rule in RULES.items():
        if rule.source == "mcpwire":
            assert key.startswith("mcpwire.") and rule.strength == "advice", key
        else:
            assert rule.url is not None, key
            assert not key.startswith("mcpwire."), key
        if rule.source.startswith("MCP "):
            revision = rule.source.split()[1]
            assert rule.url is not None and f"/specification/{revision}/" in rule.url, key
            if revision != "2026-07-28":  # a row of one revision among others: its id says which
                assert key.endswith(f"@{revision}"), key


def test_every_check_names_rules_of_the_table() -> None:
    for check in CHECKS:
        for revision in check.revisions:
            rules = check.rules_in(revision)
            assert rules, f"{check.id} names no rule of {revision}"
            named = {r for r in check.rules() if r in RULES or f"{r}@{revision}" in RULES}
            # every rule it names is a row of the table, in some revision it runs in
            assert all(r in RULES or any(f"{r}@{v}" in RULES for v in check.revisions) for r in check.rules()), (
                check.id, check.rules())
            assert named, (check.id, revision)
    with pytest.raises(KeyError):
        Expect(400, rule="no.such-rule")


def test_a_findings_status_is_its_strongest_rule() -> None:
    must, should, advice = (Problem(f"p{i}", RULES[k]) for i, k in
                            enumerate(("mcp.result-id", "mcp.cursor", "mcpwire.id-bounds")))
    assert status_of([]) == "pass" and status_of([advice]) == "advice"
    assert status_of([advice, should]) == "warn" and status_of([advice, should, must]) == "fail"
    assert visible([advice, should, must], strict=True) == [must, should, advice]  # strongest first
    assert visible([advice, should], strict=False) == [should]
    finding = Finding.of("subject", Outcome.judged([advice, should], ()))
    assert (finding.status, finding.detail) == ("warn", "p1; p2")
    shown = finding.shown(strict=False)
    assert (shown.status, shown.detail, shown.withheld) == ("warn", "p1", 1)
    only_advice = Finding.of("subject", Outcome.judged([advice], ())).shown(strict=False)
    assert (only_advice.status, only_advice.detail, only_advice.withheld) == ("pass", "", 1)
    assert Finding.of("subject", Outcome.judged([advice], ())).shown(strict=True).status == "advice"
