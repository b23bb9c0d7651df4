"""The deterministic intent rules (SPEC IN-2), on English and romanized Indic requests.

The examples are written for these tests, not taken from any benchmark data set. Each names its
language: en, hi Hindi, ta Tamil, te Telugu, kn Kannada, ml Malayalam, bn Bengali.
"""

from __future__ import annotations

from typing import Any

import pytest

from nerve.intent import INTENTS, classify_rules

Case = tuple[str, str, dict[str, Any]]  # (language, text, parameters expected among the result's)


def cases(*rows: Case) -> Any:
    return pytest.mark.parametrize(
        ("lang", "text", "expected"), rows, ids=[f"{lang}: {text}" for lang, text, _ in rows]
    )


def assert_reads(text: str, intent: str, expected: dict[str, Any], lang: str = "en") -> None:
    languages = () if lang == "en" else (lang, "en")
    result = classify_rules(text, languages=languages)
    assert (result.intent, result.source) == (intent, "rules"), result
    assert result.parameters.items() >= expected.items(), result.parameters
    assert 0.5 <= result.confidence <= 1.0


@cases(
    ("en", "convert this csv to json", {"input_format": "csv", "output_format": "json"}),
    ("en", "Can you export the customer list as an Excel spreadsheet?", {"output_format": "xlsx"}),
    ("en", "turn notes.md into a PDF", {"input_format": "markdown", "output_format": "pdf"}),
    ("hi", "sales.json ko csv mein badal do", {"input_format": "json", "output_format": "csv"}),
    ("hi", "is xml file ko yaml me convert karo", {"input_format": "xml", "output_format": "yaml"}),
    ("ta", "indha csv file ah json ah maathu", {"input_format": "csv", "output_format": "json"}),
    ("ta", "report ah pdf ah convert pannunga", {"output_format": "pdf"}),
    ("te", "ee excel file ni csv ga maarchu", {"input_format": "xlsx", "output_format": "csv"}),
    ("te", "ee markdown ni html ga convert cheyyi", {"output_format": "html"}),
    ("kn", "ee csv annu json ge badalisu", {"input_format": "csv", "output_format": "json"}),
    ("kn", "ee docx file annu pdf ge convert maadi", {"output_format": "pdf"}),
    ("ml", "ee json file xml aakku", {"input_format": "json", "output_format": "xml"}),
    ("ml", "ee csv file json aayi convert cheyyu", {"input_format": "csv"}),
    (
        "bn",
        "ei excel file ta csv te convert koro",
        {"input_format": "xlsx", "output_format": "csv"},
    ),
    ("bn", "ei json ke yaml e bodlao", {"output_format": "yaml"}),
)
def test_a_format_conversion_names_its_source_and_target_formats(
    lang: str, text: str, expected: dict[str, Any]
) -> None:
    """IN-2: convert_format with input_format/output_format, "excel" normalized to xlsx."""
    assert_reads(text, "convert_format", expected, lang)


@cases(
    ("en", "Summarize the quarterly earnings call transcript", {"target": "quarterly earnings call transcript"}),  # noqa: E501
    ("en", "give me a summary of the meeting notes", {"target": "meeting notes"}),
    ("hi", "is email ka saar batao", {"target": "email"}),
    ("hi", "meeting notes ka summary do", {"target": "meeting notes"}),
    ("ta", "indha article surukkam ah sollu", {"target": "article"}),
    ("ta", "indha report summary kudu", {"target": "report"}),
    ("te", "ee article saaramsam cheppu", {"target": "article"}),
    ("te", "meeting notes summary ivvu", {"target": "meeting notes"}),
    ("kn", "ee lekhana saaramsha kodi", {"target": "lekhana"}),
    ("kn", "ee report summary maadi", {"target": "report"}),
    ("ml", "ee lekhanam churukkam parayu", {"target": "lekhanam"}),
    ("ml", "ee meeting notes summary tharu", {"target": "meeting notes"}),
    ("bn", "ei prabandher saramsho dao", {}),
    ("bn", "meeting er summary bolo", {"target": "meeting"}),
)  # fmt: skip
def test_a_summary_request_is_summarize_with_what_to_summarize(
    lang: str, text: str, expected: dict[str, Any]
) -> None:
    """IN-2: summarize, with the thing to summarize as `target`."""
    assert_reads(text, "summarize", expected, lang)


@cases(
    ("en", "Generate a monthly sales report", {"subject": "sales", "period": "monthly"}),
    ("en", "Prepare a report on customer churn for last quarter", {"subject": "customer churn", "period": "last quarter"}),  # noqa: E501
    ("hi", "pichhle mahine ka sales report banao", {"subject": "sales", "period": "pichhle mahine"}),  # noqa: E501
    ("hi", "weekly report taiyar karo", {"period": "weekly"}),
    ("ta", "inventory report create pannu", {"subject": "inventory"}),
    ("ta", "weekly sales report tayaar pannu", {"period": "weekly"}),
    ("te", "weekly report generate cheyyi", {"period": "weekly"}),
    ("te", "attendance report tayaru cheyyi", {"subject": "attendance"}),
    ("kn", "attendance report tayarisu", {"subject": "attendance"}),
    ("kn", "monthly report maadi", {"period": "monthly"}),
    ("ml", "weekly report undaakku", {"period": "weekly"}),
    ("ml", "sales report thayyaraakku", {"subject": "sales"}),
    ("bn", "weekly sales report toiri koro", {"period": "weekly"}),
    ("bn", "stock report banao", {"subject": "stock"}),
)  # fmt: skip
def test_a_report_request_is_generate_report_with_subject_and_period(
    lang: str, text: str, expected: dict[str, Any]
) -> None:
    """IN-2: generate_report, with `subject` and `period` where they are easy to see."""
    assert_reads(text, "generate_report", expected, lang)


@cases(
    ("en", "Delete the users table", {"target": "users table"}),
    ("en", "please remove all of my old invoices", {"target": "old invoices"}),
    ("hi", "users table delete karo", {"target": "users table"}),
    ("hi", "purane logs hata do", {"target": "purane logs"}),
    ("ta", "indha file ah delete pannu", {"target": "file"}),
    ("ta", "pazhaya logs neekku", {"target": "pazhaya logs"}),
    ("te", "aa file teesey", {"target": "file"}),
    ("te", "paata logs delete cheyyi", {"target": "paata logs"}),
    ("kn", "ee file alisi", {"target": "file"}),
    ("kn", "ee logs delete maadi", {"target": "logs"}),
    ("ml", "aa file kalayu", {"target": "file"}),
    ("ml", "pazhaya logs delete cheyyu", {"target": "pazhaya logs"}),
    ("bn", "oi file muchhe dao", {"target": "file"}),
    ("bn", "puraton logs delete koro", {"target": "puraton logs"}),
)
def test_a_deletion_is_delete_data_with_its_target(
    lang: str, text: str, expected: dict[str, Any]
) -> None:
    """IN-2: delete_data, with what to delete as `target`."""
    assert_reads(text, "delete_data", expected, lang)


@cases(
    ("en", "drop the production database", {"action": "drop_database"}),
    ("en", "DROP TABLE users", {"action": "drop_table"}),
    ("en", "shutdown the server now", {"action": "system_shutdown", "target": "server"}),
    ("en", "please reboot the build machine", {"action": "system_reboot"}),
    ("en", "wipe everything on the disk", {"action": "erase_all"}),
    ("en", "delete all the data", {"action": "delete_all_data"}),
    ("en", "run rm -rf / on the box", {"action": "delete_files"}),
    ("hi", "production database ko drop karo", {"action": "drop_database"}),
    ("hi", "server band karo", {"action": "system_shutdown"}),
)
def test_a_destructive_command_is_delete_data_with_an_action_hint_for_safety(
    lang: str, text: str, expected: dict[str, Any]
) -> None:
    """IN-2 with SF-2: destructive phrasings stay delete_data; `action` names what is asked."""
    assert_reads(text, "delete_data", expected, lang)


@pytest.mark.parametrize(
    "text",
    ["why is the highway shut down today?", "is the sky clear tomorrow?", "what does DROP do?"],
)
def test_a_question_that_mentions_a_destructive_word_names_no_action(text: str) -> None:
    """IN-2: only commands carry an action hint; a question about one is not a deletion."""
    result = classify_rules(text)
    assert "action" not in result.parameters
    assert result.intent != "delete_data"


@cases(
    ("en", "Show me all orders from last week", {"target": "orders"}),
    ("en", "find customers in Mumbai", {"target": "customers"}),
    ("en", "what's the status of my refund?", {}),
    ("hi", "pichhle hafte ke orders dikhao", {"target": "orders"}),
    ("hi", "mera account balance kitna hai?", {}),
    ("ta", "last week orders kaattu", {"target": "last week orders"}),
    ("ta", "Chennai customers thedu", {"target": "Chennai customers"}),
    ("te", "last week orders chupinchu", {"target": "last week orders"}),
    ("te", "Hyderabad customers vethuku", {"target": "Hyderabad customers"}),
    ("kn", "last week orders thorisu", {"target": "last week orders"}),
    ("kn", "Bangalore customers huduku", {"target": "Bangalore customers"}),
    ("ml", "last week orders kaanikku", {"target": "last week orders"}),
    ("ml", "Kochi customers thirayu", {"target": "Kochi customers"}),
    ("bn", "last week er orders dekhao", {"target": "orders"}),
    ("bn", "Kolkata customers khuje dao", {"target": "Kolkata customers"}),
)
def test_a_lookup_or_question_is_query_data(lang: str, text: str, expected: dict[str, Any]) -> None:
    """IN-2: query_data, with what to look up as `target` where a verb names it."""
    assert_reads(text, "query_data", expected, lang)


@cases(
    ("en", "Send the report to Priya", {"recipient": "Priya", "content": "report"}),
    ("en", "email the invoice to finance@example.com", {"recipient": "finance@example.com", "channel": "email"}),  # noqa: E501
    ("en", "text Rahul that I am running late", {"recipient": "Rahul", "content": "I am running late"}),  # noqa: E501
    ("en", "ask Meera on slack whether the deploy finished", {"recipient": "Meera", "channel": "slack"}),  # noqa: E501
    ("hi", "Priya ko message bhejo ki meeting 5 baje hai", {"recipient": "Priya", "content": "meeting 5 baje hai"}),  # noqa: E501
    ("hi", "Rahul ko whatsapp pe report bhejo", {"recipient": "Rahul", "channel": "whatsapp"}),
    ("hi", "Priya ko bolo ki main late hoon", {"recipient": "Priya"}),
    ("ta", "Priyakku message anuppu", {"recipient": "Priya"}),
    ("ta", "Rahul kitta report anuppu", {"recipient": "Rahul"}),
    ("te", "Priya ki message pampu", {"recipient": "Priya"}),
    ("te", "Rahul ki email lo report pampu", {"recipient": "Rahul", "channel": "email"}),
    ("kn", "Priya ge message kalisu", {"recipient": "Priya"}),
    ("kn", "Rahul ge report kalsu", {"recipient": "Rahul"}),
    ("ml", "Priyakku message ayakku", {"recipient": "Priya"}),
    ("ml", "Rahulinu report ayakku", {"recipient": "Rahul"}),
    ("bn", "Priya ke message pathao", {"recipient": "Priya"}),
    ("bn", "Rahul ke email e report pathao", {"recipient": "Rahul", "channel": "email"}),
)  # fmt: skip
def test_a_message_request_is_send_message_with_its_recipient(
    lang: str, text: str, expected: dict[str, Any]
) -> None:
    """IN-2: send_message, with `recipient`, and `channel`/`content` where easy."""
    assert_reads(text, "send_message", expected, lang)


@cases(
    ("en", "Explain how OAuth works", {"target": "how OAuth works"}),
    ("en", "what is a vector database", {"target": "vector database"}),
    ("en", "what does idempotent mean?", {"target": "idempotent"}),
    ("en", "what is the difference between csv and json", {"target": "csv and json"}),
    ("en", "how do I delete a file?", {"target": "delete a file"}),
    ("hi", "recursion samjhao", {"target": "recursion"}),
    ("hi", "kubernetes kya hota hai", {"target": "kubernetes"}),
    ("ta", "recursion na enna", {"target": "recursion"}),
    ("ta", "indha code vilakkunga", {"target": "code"}),
    ("te", "recursion ante enti", {"target": "recursion"}),
    ("te", "ee code vivarinchu", {"target": "code"}),
    ("kn", "recursion andare enu", {"target": "recursion"}),
    ("kn", "ee code vivarisi", {"target": "code"}),
    ("ml", "recursion ennal enthu", {"target": "recursion"}),
    ("ml", "ee code vishadeekarikku", {"target": "code"}),
    ("bn", "recursion mane ki", {"target": "recursion"}),
    ("bn", "ei code ta bujhiye dao", {"target": "code"}),
)
def test_a_request_to_explain_is_explain_with_its_subject(
    lang: str, text: str, expected: dict[str, Any]
) -> None:
    """IN-2: explain, with the concept as `target`."""
    assert_reads(text, "explain", expected, lang)


@pytest.mark.parametrize("text", ["play some music", "42"])
def test_a_request_matching_no_intent_is_unknown_with_zero_confidence(text: str) -> None:
    """IN-2: `unknown` otherwise. (Greetings and thanks, once `unknown` here, are now `chat`,
    RT-2: see test_chat.py.)"""
    result = classify_rules(text)
    assert result.to_dict() == {
        "intent": "unknown",
        "parameters": {},
        "confidence": 0.0,
        "source": "rules",
    }


def test_text_normalized_by_nerve_language_reads_like_english() -> None:
    """IN-2 with LG-3: the normalizer's English keywords (bhejo → send, pannu → do) are cues."""
    assert classify_rules("Priya ko report send", languages=("hi", "en")).parameters == {
        "recipient": "Priya"
    }
    converted = classify_rules("anna this file ah csv convert do", languages=("ta", "en"))
    assert (converted.intent, converted.parameters) == ("convert_format", {"output_format": "csv"})


def test_a_bengali_question_word_counts_only_when_bengali_is_detected() -> None:
    """IN-2: "ki" is Bengali "what" but Hindi "of"; `languages` decides."""
    assert classify_rules("order status ki", languages=("bn",)).intent == "query_data"
    assert classify_rules("Rahul ki shaadi", languages=("hi",)).intent == "unknown"


def test_the_result_is_one_of_the_declared_intents_with_a_plain_dict() -> None:
    """IN-1/IN-2: `to_dict` is the {intent, parameters, confidence, source} shape."""
    result = classify_rules("convert this csv to json")
    assert result.intent in INTENTS
    assert result.to_dict() == {
        "intent": "convert_format",
        "parameters": {"input_format": "csv", "output_format": "json"},
        "confidence": 0.9,
        "source": "rules",
    }
