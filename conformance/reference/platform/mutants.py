"""Defects of the platform sandbox, one per mutant, each with the rules it must trip.

``dependents`` lists rules that may also fail because a check depending on the broken behaviour notices it
(the campaign state machine, CAMP-08, checks every response against its model).
"""

from __future__ import annotations

from conformance.reference.mutants import Mutant, row_maker

_m = row_maker("platform")


MUTANTS: list[Mutant] = [
    # token counting
    _m(
        "token-count-wrong-object",
        {"TOK-01"},
        "answers object 'input_tokens' instead of 'response.input_tokens'",
    ),
    _m(
        "token-count-nondeterministic",
        {"TOK-02"},
        "adds 0 or 1 to every count, alternately",
        {"TOK-03", "TOK-04", "TOK-05", "TOK-06"},
    ),
    _m("count-only-last-item", {"TOK-05"}, "counts only the last input item of an array", {"TOK-03"}),
    _m(
        "message-items-without-boundaries",
        {"TOK-03"},
        "message items in an input array cost only their text: no role or boundary tokens",
    ),
    _m("tools-not-counted", {"TOK-04"}, "ignores function tools in the count"),
    _m("images-not-counted", {"TOK-06"}, "input_image parts cost nothing"),
    _m("token-count-500-on-unknown-part", {"TOK-07"}, "an unknown content part type crashes with a 500"),
    _m("text-number-coerced", {"TOK-07"}, "an input_text part whose text is a number is counted as its digits"),
    _m(
        "api-key-prefix-match",
        {"TOK-07", "CAMP-15"},
        "a bearer value is accepted when it starts with a valid key (characters appended are ignored)",
    ),
    # rate limits
    _m(
        "reset-not-duration",
        {"RL-01"},
        "x-ratelimit-reset-* carry bare seconds ('0.873') instead of Go durations",
    ),
    _m("remaining-not-decreasing", {"RL-02"}, "x-ratelimit-remaining-requests never goes down", {"RL-03"}),
    _m("retry-after-lies", {"RL-03"}, "Retry-After says 1 s but the key stays throttled for 5 s"),
    _m("overload-not-json", {"RL-04"}, "the fault switch's 503 has a plain-text body"),
    _m("project-headers-partial", {"RL-05"}, "x-ratelimit-reset-project-tokens is missing"),
    # campaigns
    _m("wrong-bidding-default", {"CAMP-01"}, "bidding_type defaults to clicks instead of impressions", {"CAMP-08"}),
    _m("name-min-off-by-one", {"CAMP-02"}, "a 2-character name is accepted"),
    _m("create-archived-accepted", {"CAMP-03"}, "status 'archived' is accepted on create"),
    _m(
        "status-case-insensitive",
        {"CAMP-03"},
        "status on create is matched case-insensitively and trimmed ('Active', 'active ' accepted)",
    ),
    _m("budget-minimum-unenforced", {"CAMP-04"}, "lifetime_spend_limit_micros below 1,000,000 is accepted"),
    _m("time-lower-bound-unenforced", {"CAMP-05"}, "start_time and end_time before 946684800 are accepted"),
    _m(
        "time-numeric-string-coerced",
        {"CAMP-05"},
        'start_time and end_time given as numeric strings ("946684800") are accepted as integers',
    ),
    _m(
        "budget-fraction-truncated",
        {"CAMP-04"},
        "a fractional lifetime_spend_limit_micros (1000000.5) is truncated and accepted",
    ),
    _m("unknown-campaign-400", {"CAMP-06"}, "GET of an unknown campaign answers 400 instead of 404"),
    _m("limit-501-accepted", {"CAMP-07"}, "limit above 500 is accepted"),
    _m("limit-fraction-truncated", {"CAMP-07"}, 'a fractional limit ("1.5") is truncated and accepted'),
    _m("has-more-wrong-on-last-page", {"CAMP-08"}, "has_more is true on the last page of an after walk"),
    _m("duplicate-across-pages", {"CAMP-08"}, "an after page repeats the cursor item"),
    _m("patch-accepted", {"CAMP-09"}, "PATCH and PUT update a campaign"),
    _m("bidding-type-mutable", {"CAMP-10"}, "bidding_type can be changed by an update"),
    _m(
        "archive-reversible",
        {"CAMP-11"},
        "an archived campaign can be activated, paused and updated",
        {"CAMP-08"},
    ),
    _m("conversions-any-count", {"CAMP-12"}, "bidding_type conversions accepts two conversion event settings"),
    _m(
        "conversion-id-string-accepted",
        {"CAMP-12"},
        "conversion_event_setting_ids given as a bare string is taken as a one-element list",
    ),
    _m("same-audience-both-sides", {"CAMP-13"}, "one audience may be both included and excluded"),
    _m(
        "conflict-applies-edit",
        {"CAMP-14"},
        "answers 409 custom_audience_mutation_conflict but applies the edit",
    ),
    _m("campaigns-auth-unchecked", {"CAMP-15"}, "campaign endpoints accept a missing or wrong bearer key"),
]
