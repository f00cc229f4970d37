"""The task agent's `read_wiki` tool: an OpenAI function tool named `read_wiki` whose one
argument, required, is the page's name (empty for the list of pages)."""

import json

from wikiskill.roles.wikitool import READ_WIKI_TOOL, READ_WIKI_TOOL_NAME


def test_read_wiki_is_a_function_tool_that_takes_a_page_name():
    assert READ_WIKI_TOOL["type"] == "function" and READ_WIKI_TOOL["function"]["name"] == READ_WIKI_TOOL_NAME
    parameters = READ_WIKI_TOOL["function"]["parameters"]
    assert parameters["type"] == "object" and parameters["required"] == ["name"]
    assert parameters["properties"] == {
        "name": {"type": "string", "description": "The page's slug; empty for the list."}
    }


def test_its_description_tells_the_model_how_to_list_the_pages():
    description = READ_WIKI_TOOL["function"]["description"]
    assert "empty name" in description and "list the pages" in description
    assert json.loads(json.dumps(READ_WIKI_TOOL)) == READ_WIKI_TOOL
