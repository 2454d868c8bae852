"""Ranking tool definitions (``django_mcp/tool_search/ranking.py``): words, fields, BM25 order."""

from django_mcp.tool_search.ranking import field_texts, rank, stem, words

from .catalogue import definitions


def entry(name: str, description: str = "", title: str = "", **arguments: str) -> dict:
    return {"name": name, "title": title, "description": description,
            "inputSchema": {"type": "object", "properties": {key: {"type": "string", "description": text}
                                                             for key, text in arguments.items()}}}


def test_words_split_names_as_people_write_them() -> None:
    assert words("sendEmail") == ["send", "email"] == words("send_email")
    assert words("HTTPServer lending Libraries") == ["http", "server", "lend", "library"]
    assert words("the tool for all of it") == ["tool"]  # stopwords carry nothing
    assert stem("class") == "class" and stem("glasses") == "glass" and stem("is") == "is"
    assert {stem(word) for word in ("change", "changes", "changed", "changing")} == {"chang"}


def test_fields_come_from_every_part_of_a_definition() -> None:
    texts = field_texts(entry("lend_book", "Lend a book to a member.", "Lend a book", member_id="Who borrows it."))
    fields = {field: words(text) for field, text in texts.items()}
    assert fields == {"name": ["lend", "book"], "title": ["lend", "book"], "arguments": ["member", "id"],
                      "description": ["lend", "book", "member"], "argument_text": ["borrow"]}


def test_a_name_counts_more_than_a_description() -> None:
    tools = [entry("list_invoices", "Invoices of the month, including refunds."),
             entry("refund_order", "Give the money back for an order.")]
    assert [match.definition["name"] for match in rank("refund", tools, 5)[0]] == ["refund_order", "list_invoices"]


def test_a_rare_word_outweighs_a_common_one() -> None:
    tools = [entry(f"{verb}_book", f"{verb} a book") for verb in ("get", "create", "archive")]
    tools.append(entry("renew_loan", "Renew a book loan by a week."))
    found, matched = rank("renew book", tools, 10)
    assert found[0].definition["name"] == "renew_loan" and matched == 4


def test_argument_names_are_searched() -> None:
    tools = [entry("notify", "Tell someone.", email_address="Where to write."), entry("ping", "Check it is up.")]
    assert [match.definition["name"] for match in rank("email", tools, 5)[0]] == ["notify"]


def test_the_exact_name_comes_first_and_nothing_matches_nothing() -> None:
    catalogue = [entry(spec["name"], spec["description"], spec["title"]) for spec in definitions()]
    found, matched = rank("export_invoices", catalogue, 3)
    assert found[0].definition["name"] == "export_invoices" and matched >= 3
    assert rank("zzz qqq", catalogue, 3) == ([], 0)
    assert rank("the of and", catalogue, 3) == ([], 0)
    assert rank("invoice", [], 3) == ([], 0)


def test_ties_are_ordered_by_name_so_answers_are_stable() -> None:
    tools = [entry("b_tool", "same words"), entry("a_tool", "same words")]
    assert [match.definition["name"] for match in rank("same", tools, 5)[0]] == ["a_tool", "b_tool"]
