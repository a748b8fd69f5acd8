"""Drives `squiggle mcp` with the official MCP Python SDK, the way an MCP client does.

Run by tests/tests/it/mcp.rs: python mcp_client.py full|hidden|breadth PROJECT, with SQUIGGLE_BIN set.
Each passing step prints `ok <step>`; the first failing assertion stops with a traceback.
"""

import asyncio
import os
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

NAVIGATION = [
    "lsp_goto_definition",
    "lsp_find_references",
    "lsp_hover",
    "lsp_document_symbols",
    "lsp_workspace_symbols",
]


REFACTORING = ["lsp_rename", "lsp_code_actions"]


def where(location):
    return (location["file"], location["line"], location["column"])


def caller(session):
    """A tool call that must succeed: returns its (text, structured content)."""

    async def call(name, **args):
        result = await session.call_tool(name, args)
        assert not result.is_error, (name, args, result.content[0].text)
        return result.content[0].text, result.structured_content

    return call


async def full(session, project):
    tools = sorted(t.name for t in (await session.list_tools()).tools)
    assert tools == sorted(NAVIGATION + BREADTH + REFACTORING + ["lsp_diagnostics"]), tools
    print("ok list tools")

    call = caller(session)

    text, data = await call("lsp_goto_definition", file="app.py", symbol="make_circle")
    assert [where(l) for l in data["locations"]] == [("shapes.py", 17, 5)], data
    assert "shapes.py\n  17:5  def make_circle(radius: float) -> Circle:" in text, text
    assert text.startswith("definition of make_circle (app.py:3:28): 1 location in 1 file\n"), text
    assert data["position"] == {"line": 3, "character": 28} and data["symbol"] == "make_circle", data
    print("ok definition by symbol")

    # Models are bad at exact columns: a space before the word and the bracket after it.
    for character, snapped in [(12, 13), (24, 23)]:
        text, data = await call("lsp_goto_definition", file="app.py", line=7, character=character)
        assert [where(l) for l in data["locations"]] == [("shapes.py", 17, 5)], (character, data)
        assert data["position"] == {"line": 7, "character": snapped}, data
        assert f"asked about 7:{snapped} instead" in text, text
    print("ok off-by-one positions")

    text, data = await call("lsp_find_references", file="shapes.py", symbol="make_circle")
    found = [where(l) for l in data["locations"]]
    assert found == [("app.py", 3, 28), ("app.py", 7, 13), ("app.py", 9, 19), ("app.py", 10, 24), ("shapes.py", 17, 5)], found
    assert text.startswith("references to make_circle (shapes.py:17:5): 5 locations in 2 files\n"), text
    _, data = await call("lsp_find_references", file="shapes.py", symbol="make_circle", include_declaration=False)
    assert ("shapes.py", 17, 5) not in [where(l) for l in data["locations"]], data
    print("ok references")

    text, data = await call("lsp_hover", file="app.py", line=7, character=19)
    assert text.startswith("hover for make_circle (app.py:7:19):\n(function) def make_circle(radius: float) -> Circle"), text
    assert "Makes a circle of the given radius." in text, text
    print("ok hover")

    text, data = await call("lsp_document_symbols", file="shapes.py")
    outline = [(s["kind"], s["name"], s["line"], [c["name"] for c in s.get("children", [])]) for s in data["symbols"]]
    assert outline == [("class", "Circle", 7, ["radius", "area"]), ("function", "make_circle", 17, [])], outline
    assert "class Circle  (lines 7-14)\n  variable radius  (line 10)\n  method area  (lines 12-14)\n" in text, text
    assert "note: 1 local symbol (declared inside a function or method) is left out" in text, text
    _, data = await call("lsp_document_symbols", file="shapes.py", include_locals=True)
    assert [c["name"] for c in data["symbols"][1].get("children", [])] == ["radius"], data
    print("ok document symbols")

    text, data = await call("lsp_workspace_symbols", query="make_circle")
    found = [(s["kind"], s["name"], s["file"], s["line"]) for s in data["symbols"]]
    assert ("function", "make_circle", "shapes.py", 17) in found, found
    print("ok workspace symbols")

    text, data = await call("lsp_diagnostics", file="app.py")
    assert text == "no diagnostics\n", text
    print("ok diagnostics")

    for outside in ["../outside.py", "/etc/hostname", "link.py"]:
        result = await session.call_tool("lsp_hover", {"file": outside, "line": 1, "character": 1})
        assert result.is_error, outside
        assert "outside the workspace root" in result.content[0].text, result.content[0].text
    print("ok boundary refusals")

    text, data = await call("lsp_code_actions", file="app.py", line=7)
    assert text.startswith("code actions for app.py:7"), text
    assert isinstance(data["actions"], list), data
    print("ok code actions")

    # Last: it changes the project.
    text, data = await call("lsp_rename", file="shapes.py", symbol="make_circle", new_name="build_circle")
    assert text.startswith("rename `make_circle` (shapes.py:17:5) to `build_circle`: preview\n2 files changed\n"), text
    assert data["files"] == ["app.py", "shapes.py"] and not data["applied"], data
    assert "-    small = make_circle(1.0)\n+    small = build_circle(1.0)\n" in text, text
    assert "make_circle" in open(os.path.join(project, "app.py")).read(), "a preview writes nothing"
    text, data = await call("lsp_rename", file="shapes.py", symbol="make_circle", new_name="build_circle", apply=True)
    assert data["applied"] and data["files"] == ["app.py", "shapes.py"], data
    assert text.endswith("after the change: no errors in the changed files\n"), text
    assert "make_circle" not in open(os.path.join(project, "app.py")).read()
    text, _ = await call("lsp_diagnostics", file="app.py")
    assert text == "no diagnostics\n", text
    print("ok rename")


async def hidden(session, project):
    tools = [t.name for t in (await session.list_tools()).tools]
    assert tools == ["lsp_diagnostics", "lsp_workspace_diagnostics"], tools
    result = await session.call_tool("lsp_rename", {"file": "app.py", "symbol": "main", "new_name": "x"})
    assert result.is_error and "no tool" in result.content[0].text, result
    result = await session.call_tool("lsp_hover", {"file": "app.py", "line": 7, "character": 13})
    assert result.is_error and "no tool" in result.content[0].text, result
    print("ok hidden navigation tools")


BREADTH = [
    "lsp_call_hierarchy",
    "lsp_implementation",
    "lsp_type_definition",
    "lsp_workspace_diagnostics",
]


async def breadth(session, project):
    """Call hierarchy, type definition, definition bodies and folder diagnostics on pyright."""
    listed = await session.list_tools()
    tools = sorted(t.name for t in listed.tools)
    assert set(BREADTH + NAVIGATION + ["lsp_diagnostics"]) <= set(tools), tools
    print("ok list breadth tools")

    call = caller(session)

    text, data = await call("lsp_call_hierarchy", file="shapes.py", symbol="make_circle")
    assert text.startswith("incoming calls to make_circle (shapes.py:17:5): 1 caller, 3 call sites\nfunction main  app.py:6\n  7:13  small = make_circle(1.0)\n"), text
    assert [(c["name"], c["file"], c["line"]) for c in data["calls"]] == [("main", "app.py", 6)], data
    assert data["direction"] == "incoming" and data["depth"] == 1, data
    text, data = await call("lsp_call_hierarchy", file="app.py", symbol="main", direction="outgoing", depth=2)
    callees = [(c["name"], c["file"]) for c in data["calls"] if not c["file"].startswith("/")]
    assert callees == [("area", "shapes.py"), ("make_circle", "shapes.py")], data
    assert "function make_circle  shapes.py:17\n  app.py:7:13  small = make_circle(1.0)\n" in text, text
    result = await session.call_tool("lsp_call_hierarchy", {"file": "app.py", "symbol": "main", "depth": 4})
    assert result.is_error and "`depth` must be 1 to 3" in result.content[0].text, result
    print("ok call hierarchy")

    text, data = await call("lsp_goto_definition", file="app.py", symbol="make_circle", include_body=True)
    assert "shapes.py:17-19\ndef make_circle(radius: float) -> Circle:\n" in text, text
    assert data["bodies"][0]["source"].endswith("return Circle(radius)"), data
    print("ok definition with body")

    text, data = await call("lsp_type_definition", file="app.py", line=7, character=5)
    assert [(l["file"], l["line"]) for l in data["locations"]] == [("shapes.py", 7)], data
    result = await session.call_tool("lsp_implementation", {"file": "app.py", "symbol": "main"})
    assert result.is_error and "(the language servers for app.py) do not offer textDocument/implementation" in result.content[0].text, result
    print("ok type definition and implementation")

    text, data = await call("lsp_workspace_diagnostics", path="pkg")
    assert text.startswith("2 of 2 files checked: 1 with diagnostics\npkg/bad.py:\n1:10"), text
    assert list(data["files"]) == ["pkg/bad.py"] and data["files_asked"] == 2, data
    print("ok workspace diagnostics")


async def main():
    mode, project = sys.argv[1], sys.argv[2]
    params = StdioServerParameters(command=os.environ["SQUIGGLE_BIN"], args=["mcp", "--root", project], env=dict(os.environ))
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            info = await session.initialize()
            assert info.server_info.name == "squiggle", info
            print("ok initialize")
            await {"full": full, "hidden": hidden, "breadth": breadth}[mode](session, project)


asyncio.run(main())
