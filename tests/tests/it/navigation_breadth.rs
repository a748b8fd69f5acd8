//! Call hierarchy, implementation, type definition, definition bodies and a folder's
//! diagnostics: against pyright and typescript-language-server for the answers, and against
//! the fake server for the refusals and errors.

#![allow(clippy::unwrap_used)]

use std::time::Duration;

use crate::support::real_server::{PYRIGHT, TYPESCRIPT};
use crate::support::{assert_no_process_in, fixture, real_servers_turn_async, FakeWorkspace, Mcp};
use serde_json::json;
use squiggle_actors::{NavError, Target};
use squiggle_protocol::navigation::{Call, Direction};

/// Asks `question` until its answer lists something (a server still loading the project
/// answers with nothing and a note saying so), within a minute; the last answer.
async fn until_found<T: std::fmt::Debug, F, Fut>(question: F) -> squiggle_actors::Answer<Vec<T>>
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = Result<squiggle_actors::Answer<Vec<T>>, NavError>>,
{
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        let answer = question().await.unwrap();
        if !answer.items.is_empty() || tokio::time::Instant::now() > deadline {
            return answer;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

fn symbol(name: &str) -> Target {
    Target::Symbol {
        name: name.to_string(),
        line: None,
    }
}

/// (name, file, line, [(site line, site column)], [next level]) of each call, to compare.
type Shape = (String, String, u32, Vec<(u32, u32)>, Vec<String>);

fn shape(calls: &[Call]) -> Vec<Shape> {
    calls
        .iter()
        .map(|call| {
            (
                call.name.clone(),
                call.file.clone(),
                call.line,
                call.sites.iter().map(|s| (s.line, s.column)).collect(),
                call.calls.iter().map(|c| c.name.clone()).collect(),
            )
        })
        .collect()
}

fn called(name: &str, file: &str, line: u32, sites: &[(u32, u32)], deeper: &[&str]) -> Shape {
    (
        name.to_string(),
        file.to_string(),
        line,
        sites.to_vec(),
        deeper.iter().map(|s| s.to_string()).collect(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pyright_answers_the_call_hierarchy_both_ways_and_a_definition_with_its_body() {
    let (_held, squiggle, project) = PYRIGHT.on_fixture_patient("nav-python").await;

    let incoming = squiggle
        .call_hierarchy("shapes.py", symbol("make_circle"), Direction::Incoming, 1)
        .await
        .unwrap();
    let outgoing = squiggle
        .call_hierarchy("app.py", symbol("main"), Direction::Outgoing, 2)
        .await
        .unwrap();
    let defined = squiggle
        .goto_definition("app.py", symbol("make_circle"))
        .await
        .unwrap();
    let (bodies, body_notes) = squiggle.definition_bodies(&defined.items, 80).await;
    let (cut, _) = squiggle.definition_bodies(&defined.items, 2).await;
    let typed = squiggle
        .type_definition("app.py", Target::At { line: 7, column: 5 })
        .await
        .unwrap();
    let implementation = squiggle
        .implementation("app.py", symbol("main"))
        .await
        .unwrap_err();
    squiggle.shutdown().await;

    assert_eq!(
        shape(&incoming.items),
        vec![called(
            "main",
            "app.py",
            6,
            &[(7, 13), (9, 19), (10, 24)],
            &[]
        )],
        "{incoming:?}"
    );
    assert_eq!(incoming.items[0].sites[0].text, "small = make_circle(1.0)");
    let in_workspace: Vec<Shape> = shape(&outgoing.items)
        .into_iter()
        .filter(|(_, file, ..)| !file.starts_with('/'))
        .collect();
    assert_eq!(
        in_workspace,
        vec![
            called("area", "shapes.py", 12, &[(8, 17), (10, 15), (10, 41)], &[]),
            called(
                "make_circle",
                "shapes.py",
                17,
                &[(7, 13), (9, 19), (10, 24)],
                &["Circle"]
            ),
        ],
        "{outgoing:?}"
    );
    // The second level: make_circle calls Circle at its line 19, in shapes.py.
    let make_circle = &outgoing.items.iter().find(|c| c.name == "make_circle");
    let site = &make_circle.unwrap().calls[0].sites[0];
    assert_eq!((site.file.as_str(), site.line), ("shapes.py", 19));

    assert_eq!(bodies.len(), 1, "{body_notes:?}");
    assert_eq!(
        (bodies[0].file.as_str(), bodies[0].line, bodies[0].end_line),
        ("shapes.py", 17, 19)
    );
    assert_eq!(
        bodies[0].source,
        "def make_circle(radius: float) -> Circle:\n    \"\"\"Makes a circle of the given radius.\"\"\"\n    return Circle(radius)"
    );
    assert_eq!((cut[0].source.lines().count(), cut[0].cut), (2, 1));

    let places: Vec<(String, u32)> = typed
        .items
        .iter()
        .map(|l| (l.file.clone(), l.line))
        .collect();
    assert_eq!(places, vec![("shapes.py".to_string(), 7)], "{typed:?}");
    assert!(
        matches!(&implementation, NavError::NotOffered { servers, what, .. } if servers == "pyright" && what == "textDocument/implementation"),
        "{implementation}"
    );
    assert_eq!(
        implementation.to_string(),
        "pyright (the language server for app.py) does not offer textDocument/implementation"
    );
    assert_no_process_in(&project);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typescript_answers_implementations_of_an_interface_and_the_call_hierarchy_both_ways() {
    let (_held, squiggle, project) = TYPESCRIPT.on_fixture_patient("nav-ts").await;

    let classes = until_found(|| squiggle.implementation("src/shape.ts", symbol("Shape"))).await;
    let methods = squiggle
        .implementation("src/shape.ts", symbol("area"))
        .await
        .unwrap();
    let incoming = squiggle
        .call_hierarchy("src/main.ts", symbol("total"), Direction::Incoming, 2)
        .await
        .unwrap();
    let outgoing = squiggle
        .call_hierarchy("src/main.ts", symbol("report"), Direction::Outgoing, 1)
        .await
        .unwrap();
    squiggle.shutdown().await;

    let places = |answer: &squiggle_actors::Answer<Vec<squiggle_actors::Location>>| {
        answer
            .items
            .iter()
            .map(|l| (l.file.clone(), l.line, l.text.clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        places(&classes),
        vec![
            (
                "src/circle.ts".to_string(),
                3,
                "export class Circle implements Shape {".to_string()
            ),
            (
                "src/square.ts".to_string(),
                3,
                "export class Square implements Shape {".to_string()
            ),
        ],
        "{classes:?}"
    );
    assert_eq!(
        (places(&methods).iter())
            .map(|(f, l, _)| (f.as_str(), *l))
            .collect::<Vec<_>>(),
        vec![("src/circle.ts", 6), ("src/square.ts", 6)],
        "{methods:?}"
    );
    assert_eq!(
        shape(&incoming.items),
        vec![
            called("report", "src/main.ts", 9, &[(11, 19)], &["main"]),
            called("main", "src/main.ts", 14, &[(16, 15)], &[]),
        ],
        "{incoming:?}"
    );
    let in_workspace: Vec<Shape> = shape(&outgoing.items)
        .into_iter()
        .filter(|(_, file, ..)| !file.starts_with('/'))
        .collect();
    assert_eq!(
        in_workspace,
        vec![
            called("Circle", "src/circle.ts", 3, &[(10, 23)], &[]),
            called("total", "src/main.ts", 5, &[(11, 19)], &[]),
            called("Square", "src/square.ts", 3, &[(10, 38)], &[]),
        ],
        "{outgoing:?}"
    );
    assert_no_process_in(&project);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_folders_diagnostics_are_grouped_by_file_from_pyright() {
    let _turn = real_servers_turn_async().await;
    let (_dir, project) = fixture("nav-python");
    std::fs::create_dir_all(project.join("pkg")).unwrap();
    std::fs::write(project.join("pkg/bad.py"), "x: int = \"text\"\n").unwrap();
    std::fs::write(project.join("pkg/good.py"), "y: int = 1\n").unwrap();
    let squiggle = PYRIGHT.start_patient(&project).await;

    let files = [project.join("pkg/bad.py"), project.join("pkg/good.py")];
    let answer = squiggle.workspace_diagnostics(&files).await.unwrap();
    squiggle.shutdown().await;

    let report = answer.items;
    assert_eq!(report.files_asked, 2);
    assert_eq!(report.not_checked, Default::default(), "{:?}", answer.notes);
    assert_eq!(report.files["pkg/good.py"], vec![]);
    let bad: Vec<(u32, u32, Option<String>)> = (report.files["pkg/bad.py"].iter())
        .map(|d| (d.line, d.column, d.code.clone()))
        .collect();
    assert_eq!(bad, vec![(1, 10, Some("reportAssignmentType".to_string()))]);
    assert_no_process_in(&project);
}

/// Asks each breadth tool (call hierarchy, implementation, type definition) about `area` in
/// `a.fake`; (tool, result) of each.
fn ask_breadth_tools(mcp: &mut Mcp, limit: Duration) -> Vec<(&'static str, serde_json::Value)> {
    let tools = [
        "lsp_call_hierarchy",
        "lsp_implementation",
        "lsp_type_definition",
    ];
    tools
        .into_iter()
        .map(|tool| {
            let result = mcp.call(tool, json!({"file": "a.fake", "symbol": "area"}), limit);
            (tool, result)
        })
        .collect()
}

/// A workspace served by a fake server with the given script, through `squiggle mcp`.
fn fake_mcp(script: serde_json::Value) -> (FakeWorkspace, Mcp) {
    let ws = FakeWorkspace::new();
    ws.write_scripted_toml(&script);
    ws.write("a.fake", "function area\narea()\n");
    let mcp = Mcp::start(&ws.root, Duration::from_secs(20));
    (ws, mcp)
}

#[test]
fn a_server_without_the_capability_is_named_in_the_refusal() {
    let (ws, mut mcp) = fake_mcp(json!({"symbols": true, "definition": true}));
    let limit = Duration::from_secs(20);

    for (tool, result) in ask_breadth_tools(&mut mcp, limit) {
        assert_eq!(result["isError"], true, "{tool}: {result}");
        let text = result["content"][0]["text"].as_str().unwrap();
        assert!(
            text.starts_with("fake (the language server for a.fake) does not offer textDocument/"),
            "{tool}: {text}"
        );
    }
    mcp.close(limit);
    assert!(ws.received("textDocument/implementation").is_empty());
    crate::support::assert_no_process_in(&ws.root);
}

#[test]
fn a_server_error_is_said_not_taken_for_an_empty_answer() {
    let (ws, mut mcp) = fake_mcp(json!({"symbols": true, "breadth_error": "index is corrupt"}));
    let limit = Duration::from_secs(20);

    for (tool, result) in ask_breadth_tools(&mut mcp, limit) {
        assert_eq!(result["isError"], false, "{tool}: {result}");
        let notes = &result["structuredContent"]["notes"];
        assert!(
            notes.as_array().unwrap().iter().any(|n| n
                .as_str()
                .unwrap()
                .starts_with("fake answered with an error: ")
                && n.as_str().unwrap().contains("index is corrupt")),
            "{tool}: {result}"
        );
    }
    mcp.close(limit);
    assert_eq!(ws.received("textDocument/implementation").len(), 1);
    crate::support::assert_no_process_in(&ws.root);
}

#[test]
fn workspace_diagnostics_come_from_workspace_diagnostic_where_the_server_offers_it() {
    let (ws, mut mcp) = fake_mcp(json!({"pull": true, "workspace_diagnostics": true}));
    ws.write("src/b.fake", "ERROR broken\n");
    ws.write("src/c.fake", "fine\n");
    ws.write("other/d.fake", "ERROR elsewhere\n");
    let limit = Duration::from_secs(20);

    let folder = mcp.call("lsp_workspace_diagnostics", json!({"path": "src"}), limit);
    let glob = mcp.call(
        "lsp_workspace_diagnostics",
        json!({"path": "**/d.fake"}),
        limit,
    );
    let outside = mcp.call("lsp_workspace_diagnostics", json!({"path": ".."}), limit);
    mcp.close(limit);

    let text = folder["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with(
            "2 of 2 files checked: 1 with diagnostics\nsrc/b.fake:\n1:1 found ERROR: broken"
        ),
        "{text}"
    );
    assert!(
        text.contains("note: 2 files answered from workspace/diagnostic, 0 checked one by one"),
        "{text}"
    );
    assert_eq!(
        folder["structuredContent"]["files"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        vec!["src/b.fake"]
    );
    let glob_text = glob["content"][0]["text"].as_str().unwrap();
    assert!(glob_text.contains("other/d.fake:"), "{glob_text}");
    assert!(glob_text.starts_with("1 of 1 files checked"), "{glob_text}");
    assert_eq!(outside["isError"], true, "{outside}");
    // Answered by the workspace pull: no file was opened to check it.
    assert!(ws.received("textDocument/didOpen").is_empty());
    assert!(!ws.received("workspace/diagnostic").is_empty());
    crate::support::assert_no_process_in(&ws.root);
}

#[test]
fn workspace_diagnostics_open_the_files_when_the_server_has_no_workspace_pull() {
    let (ws, mut mcp) = fake_mcp(json!({}));
    ws.write("src/b.fake", "ERROR broken\n");
    ws.write("src/c.fake", "fine\n");
    let limit = Duration::from_secs(20);

    let folder = mcp.call("lsp_workspace_diagnostics", json!({"path": "src"}), limit);
    mcp.close(limit);

    let text = folder["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("2 of 2 files checked: 1 with diagnostics\nsrc/b.fake:\n"),
        "{text}"
    );
    assert_eq!(ws.received("textDocument/didOpen").len(), 2);
    crate::support::assert_no_process_in(&ws.root);
}

#[test]
fn serve_answers_the_breadth_methods_with_the_tools_shapes() {
    let (ws, mcp) = fake_mcp(json!({"symbols": true, "breadth_error": "index is corrupt"}));
    mcp.close(Duration::from_secs(20));
    ws.write("src/b.fake", "ERROR broken\n");
    let mut serve = crate::support::Serve::start(&ws.root, &[]);
    let limit = Duration::from_secs(20);
    assert_eq!(serve.next(limit)["method"], "lsp/ready");

    serve.request(
        1,
        "squiggle/callHierarchy",
        json!({"file": "a.fake", "symbol": "area", "direction": "outgoing"}),
    );
    serve.request(
        2,
        "squiggle/implementation",
        json!({"file": "a.fake", "line": 1, "character": 10}),
    );
    serve.request(3, "squiggle/typeDefinition", json!({"file": "a.fake"}));
    serve.request(4, "squiggle/workspaceDiagnostics", json!({"path": "src"}));
    serve.request(
        5,
        "squiggle/callHierarchy",
        json!({"file": "a.fake", "symbol": "area", "direction": "sideways"}),
    );

    let calls = serve.answer(1, limit)["result"].clone();
    assert_eq!(calls["direction"], "outgoing", "{calls}");
    assert_eq!(calls["calls"], json!([]));
    assert!(calls["text"]
        .as_str()
        .unwrap()
        .starts_with("outgoing calls from area (a.fake:1:10): none\n"));
    let implementation = serve.answer(2, limit)["result"].clone();
    assert_eq!(
        implementation["position"],
        json!({"line": 1, "character": 10})
    );
    assert!(
        implementation["text"]
            .as_str()
            .unwrap()
            .contains("note: fake answered with an error: "),
        "{implementation}"
    );
    let untargeted = serve.answer(3, limit);
    assert_eq!(untargeted["error"]["code"], -32602, "{untargeted}");
    let folder = serve.answer(4, limit)["result"].clone();
    assert_eq!(folder["files_asked"], 1, "{folder}");
    assert_eq!(
        folder["files"]["src/b.fake"][0]["message"],
        "found ERROR: broken"
    );
    let sideways = serve.answer(5, limit);
    assert!(
        sideways["error"]["message"]
            .as_str()
            .unwrap()
            .contains("\"incoming\" or \"outgoing\""),
        "{sideways}"
    );
    serve.request(6, "lsp/shutdown", json!({}));
    serve.answer(6, limit);
    crate::support::assert_no_process_in(&ws.root);
}
